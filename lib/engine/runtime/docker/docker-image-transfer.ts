import type { Readable } from 'node:stream';
import type { EngineHttp } from '../../../client/engine-http/engine-http.js';
import type { PushRequest } from '../../../engine-api/image-operations.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { BUILD_HOST_FIELDS, type BuildOperations, type BuildRequest, type CommitContainerRequest } from '../../../engine-api/build-operations.js';
import type { ReferenceKind } from './path-segment.js';

/**
 * The Docker runtime's image-making and image-moving operations: build, commit and push,
 * forwarded to the engine. Bodies and answers are streams piped with back-pressure: a build
 * context goes to the engine as the client sends it, and the engine's JSON messages come back as
 * it writes them, so neither is ever held whole.
 */
export class DockerImageTransfer implements BuildOperations {
  constructor(
    private readonly http: EngineHttp,
    private readonly paths: { at(apiVersion: string): Promise<string>; id(ref: string, kind?: ReferenceKind): string },
  ) {}

  /** The engine's push: its progress, and its refusals in the stream, byte for byte. */
  async pushImage({ name, tag, registryAuth, apiVersion, signal }: PushRequest): Promise<Readable> {
    // The name keeps its slashes: dockerd routes `/images/{name:.*}/push`.
    const path = name.split('/').map((part) => this.paths.id(part, 'image')).join('/');
    return this.http.send({
      method: 'POST',
      path: `${await this.paths.at(apiVersion)}/images/${path}/push`,
      query: { tag },
      headers: { 'X-Registry-Auth': registryAuth },
      signal,
    });
  }

  /**
   * The engine's classic build: the parsed request written back as dockerd's query, the context
   * piped as it comes. dockerd pulls FROM images itself, past `checkPull`: under a policy `pull=1`
   * (which moves tags that exist) is refused; a FROM of an image dockerd lacks is still its own pull.
   */
  async build(request: BuildRequest): Promise<Readable> {
    const { context, registryConfig, apiVersion, signal } = request;
    if (request.checkPull && request.pull) {
      context.resume();
      throw new EngineError('Forbidden', 'pull: a build through dockerd pulls its FROM images past the policy; build without pull=1');
    }
    return this.http.send({
      method: 'POST',
      path: `${await this.paths.at(apiVersion)}/build`,
      query: buildQuery(request),
      stream: context,
      ...(registryConfig !== undefined ? { headers: { 'X-Registry-Config': registryConfig } } : {}),
      signal,
    });
  }

  async commit({ container, ref, comment, author, pause, changes, config, apiVersion }: CommitContainerRequest): Promise<{ Id: string }> {
    const { repo, tag } = ref !== undefined ? splitRef(ref) : { repo: undefined, tag: undefined };
    return this.http.json<{ Id: string }>({
      method: 'POST',
      path: `${await this.paths.at(apiVersion)}/commit`,
      query: { container, repo, tag, comment, author, pause: pause ? '1' : '0', ...(changes.length > 0 ? { changes } : {}) },
      body: config ?? {},
    });
  }
}

/** `POST /build`'s query as dockerd reads it, from the request the router parsed. */
function buildQuery(request: BuildRequest): Record<string, string | string[] | undefined> {
  const query: Record<string, string | string[] | undefined> = {
    dockerfile: request.dockerfile,
    t: request.tags,
    target: request.target,
    nocache: request.nocache ? '1' : undefined,
    pull: request.pull ? '1' : undefined,
    rm: request.rm ? '1' : '0',
    forcerm: request.forcerm ? '1' : undefined,
    q: request.quiet ? '1' : undefined,
    labels: JSON.stringify(request.labels),
    buildargs: JSON.stringify(request.buildArgs),
    cachefrom: JSON.stringify(request.cacheFrom),
    networkmode: request.networkMode,
  };
  for (const [param, field, kind] of BUILD_HOST_FIELDS) {
    const value = request.hostConfig[field];
    if (value === undefined) continue;
    query[param] = kind === 'json' ? JSON.stringify(value) : Array.isArray(value) ? value.join(',') : String(value);
  }
  return query;
}

/** `name:tag` into dockerd's `repo` and `tag` (a registry's port is not a tag). */
function splitRef(ref: string): { repo: string; tag: string | undefined } {
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? { repo: ref.slice(0, colon), tag: ref.slice(colon + 1) } : { repo: ref, tag: undefined };
}
