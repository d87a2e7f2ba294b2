import type { Readable } from 'node:stream';
import type { EngineHttp } from '../../../client/engine-http/engine-http.js';
import type { PushRequest } from '../../../engine-api/image-operations.js';
import type { BuildOperations, ContainerCommitRequest, ImageBuildRequest } from '../../../engine-api/build-operations.js';
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

  async buildImage({ context, query, registryConfig, apiVersion, signal }: ImageBuildRequest): Promise<Readable> {
    return this.http.send({
      method: 'POST',
      path: `${await this.paths.at(apiVersion)}/build`,
      query,
      stream: context,
      ...(registryConfig !== undefined ? { headers: { 'X-Registry-Config': registryConfig } } : {}),
      signal,
    });
  }

  async commitContainer({ container, query, config, apiVersion }: ContainerCommitRequest): Promise<{ Id: string }> {
    return this.http.json<{ Id: string }>({
      method: 'POST',
      path: `${await this.paths.at(apiVersion)}/commit`,
      query: { ...query, container },
      body: config ?? {},
    });
  }
}
