import type { Readable } from 'node:stream';
import type { EngineFilters } from './filters.js';
import type { ConnectCheck } from '../http/checked-fetch.js';

/** Options of `GET /images/json`. */
export interface ImageListOptions {
  /** `all`: include intermediate images. */
  all: boolean;
  /** `filters` (`dangling`, `label`, `reference`, `before`, `since`). */
  filters: EngineFilters;
  /** `digests`: include RepoDigests. */
  digests: boolean;
  /** `shared-size` (API ≥ 1.42): compute SharedSize. */
  sharedSize: boolean;
  apiVersion: string;
}

/** Options of `DELETE /images/{name}`. */
export interface ImageRemoveOptions {
  force: boolean;
  /** `noprune`: keep untagged parents. */
  noprune: boolean;
  apiVersion: string;
}

/** One line of dockerd's image delete answer (types/image.DeleteResponse). */
export type ImageDeleteItem = { Untagged: string } | { Deleted: string };

/** `POST /images/prune` answer. */
export interface ImagePruneReport {
  ImagesDeleted: ImageDeleteItem[] | null;
  SpaceReclaimed: number;
}

/** What `POST /images/load` hands the runtime. */
/**
 * Called by a load with every name the archive would tag, as the loader itself parsed them
 * (familiar form), once the archive is spooled and before any layer is stored or tag written; a
 * rejection ends the load with that error (the route answers it, a 403 for a policy's refusal).
 * It is how a policy judges the names the loader read rather than a second reading of its own.
 */
export type LoadNameCheck = (names: readonly string[]) => Promise<void>;

export interface ImageLoadRequest {
  /** The `docker save` tarball as the client sends it, read with back-pressure, never buffered whole. */
  tar: Readable;
  /** `quiet`: no progress bars, only the final `Loaded image: …` lines. */
  quiet: boolean;
  apiVersion: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Set under a policy: a runtime must call it before it writes any tag (see {@link LoadNameCheck}). */
  checkNames?: LoadNameCheck;
}

/** What the router hands a runtime to push (`POST /images/{name}/push?tag=…`). */
export interface PushRequest {
  /** The `{name}` of the path as sent (`127.0.0.1:5000/alice/x`, possibly with a tag), already validated. */
  name: string;
  /** The `tag` parameter as sent; none (and no tag in `name`) pushes every local tag of the repository. */
  tag?: string;
  /** The client's `X-Registry-Auth` header, passed on untouched; a credential, never log it. */
  registryAuth: string;
  apiVersion: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /**
   * Set for a tenant under a policy: asked before each connection the push makes (the registry,
   * a redirect, a token realm) with the address the host resolved to; a reason refuses it (403).
   * The local runtimes' registry client applies it; the Docker runtime's dockerd connects itself.
   */
  connectCheck?: ConnectCheck;
}

/** What `POST /images/create?fromSrc=…` (`docker import`) hands the runtime. */
export interface ImageImportRequest {
  /** The tar (plain or gzip): the request body (`fromSrc=-`) or what the URL answered, read with back-pressure. */
  tar: Readable;
  /** `-` or the URL it came from (dockerd's default comment says `Imported from <source>`). */
  source: string;
  /** The validated familiar `name:tag` from `repo` and `tag`; none: the image stays untagged. */
  ref?: string;
  /** `message`: the image's comment. */
  message?: string;
  /** `changes`: Dockerfile instructions applied to the image's config (CMD, ENV, …). */
  changes: string[];
  apiVersion: string;
  signal: AbortSignal;
}

/**
 * Optional image operations. Image references arrive as the client sent them (name[:tag],
 * name@digest, full or short id); an unknown one is 404 `No such image: <ref>`. A runtime
 * with a real image store (content-addressed blobs) supplies all of them; a runtime whose
 * images are configuration supplies the listing ones, and save/load answer 501.
 */
export interface ImageOperations {
  /** `GET /images/json` body: image summaries (types/image.Summary). */
  listImages(options: ImageListOptions): Promise<Record<string, unknown>[]>;
  /** `GET /images/{name}/json` body (types.ImageInspect). */
  inspectImage(ref: string, apiVersion: string): Promise<Record<string, unknown>>;
  /** `GET /images/{name}/history` body (newest layer first). */
  imageHistory(ref: string, apiVersion: string): Promise<Record<string, unknown>[]>;
  /** `POST /images/{name}/tag`: `target` is the validated familiar `repo:tag`. */
  tagImage(ref: string, target: string): Promise<void>;
  /** `DELETE /images/{name}`: what was untagged and deleted, in dockerd's order; in use → 409. */
  removeImage(ref: string, options: ImageRemoveOptions): Promise<ImageDeleteItem[]>;
  /** `POST /images/prune`: unused images (only untagged ones unless `dangling=false`). */
  pruneImages(filters: EngineFilters, apiVersion: string): Promise<ImagePruneReport>;
  /**
   * `GET /images/get?names=…` and `GET /images/{name}/get`: a `docker save` tarball
   * (docker-archive with manifest.json, and an OCI layout where the store has one) as a
   * stream; the router pipes it with back-pressure. Rejects before any byte for an unknown image.
   */
  saveImages(refs: string[], signal: AbortSignal): Promise<Readable>;
  /**
   * `POST /images/load`: reads the tarball and resolves with dockerd's JSON-lines output
   * (`{"stream":"Loaded image: busybox:latest\n"}` per image, progress lines first unless
   * quiet), streamed to the client; see {@link loadedImageLines} for the final lines.
   */
  loadImages(request: ImageLoadRequest): Promise<Readable>;
  /**
   * `POST /images/{name}/push`: resolves with dockerd's JSON-lines progress (`The push refers to
   * repository […]`, per-layer `Preparing`/`Pushing`/`Pushed`/`Layer already exists`, the final
   * `<tag>: digest: … size: …` and `aux` lines). An image the runtime does not have is 404
   * `An image does not exist locally with the tag: <name>`; a registry's refusal ends the stream
   * with an `errorDetail` line, as dockerd's does.
   */
  pushImage(request: PushRequest): Promise<Readable>;

  /**
   * `POST /images/create?fromSrc=…`: makes an image of the tar and resolves with its ID once it
   * is stored; an invalid change rejects (400) before the tar is read. Optional: without it the
   * route answers 501 naming image import.
   */
  importImage?(request: ImageImportRequest): Promise<string>;
}

/**
 * The lines dockerd writes at the end of a load for the references it loaded
 * (`Loaded image: <ref>`, or `Loaded image ID: <id>` for an untagged one), as JSON lines.
 *
 * @example
 * loadedImageLines(['busybox:latest']); // '{"stream":"Loaded image: busybox:latest\\n"}\r\n'
 */
export function loadedImageLines(refs: readonly string[]): string {
  return refs
    .map((ref) => JSON.stringify({ stream: `${ref.startsWith('sha256:') ? 'Loaded image ID' : 'Loaded image'}: ${ref}\n` }) + '\r\n')
    .join('');
}
