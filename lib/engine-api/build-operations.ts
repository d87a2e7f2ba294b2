import type { Readable } from 'node:stream';

/** What the router hands a runtime to build an image (`POST /build`, the classic builder). */
export interface ImageBuildRequest {
  /** The build context as the client streams it (a tar, plain or compressed), read with back-pressure, never buffered whole. */
  context: Readable;
  /** The query parameters as sent (`t`, `buildargs`, `target`…; a repeated one as a list): the runtime reads what it honours and refuses the rest. */
  query: Record<string, string | string[]>;
  /** `X-Registry-Config` as sent (base64 JSON of credentials per registry, for FROM pulls); a credential, never log it. */
  registryConfig?: string;
  apiVersion: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** What the router hands a runtime to commit a container (`POST /commit`). */
export interface ContainerCommitRequest {
  /** The `container` parameter: id, unique id prefix or name. */
  container: string;
  /** The query parameters as sent (`repo`, `tag`, `comment`, `author`, `pause`, `changes` — repeated). */
  query: Record<string, string | string[]>;
  /** The JSON body: a container Config merged over the image's; undefined when none was sent. */
  config?: Record<string, unknown>;
  apiVersion: string;
}

/**
 * Optional operations that make images from a build context or a container. A runtime without
 * them answers 501 naming the feature.
 */
export interface BuildOperations {
  /** `POST /build`: dockerd's JSON message stream (`stream`, `aux` with the image ID, `errorDetail`), streamed. */
  buildImage(request: ImageBuildRequest): Promise<Readable>;
  /** `POST /commit`: the new image's ID (`{"Id":"sha256:…"}`); unknown container → 404. */
  commitContainer(request: ContainerCommitRequest): Promise<{ Id: string }>;
}
