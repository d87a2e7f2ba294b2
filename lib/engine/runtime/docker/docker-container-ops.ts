import type { Readable } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import { apiVersionLessThan } from '../../../engine-api/api-version.js';
import type { EngineHttp } from '../../../client/engine-http/engine-http.js';
import type { ReferenceKind } from './path-segment.js';
import { readAll } from '../../../client/engine-http/engine-http.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type { AttachSession } from '../../../engine-api/runtime-types.js';
import type { ExecOperations, ExecStartOptions } from '../../../engine-api/exec-operations.js';
import type { ExecSpec } from '../../../engine-api/exec-spec.js';
import type {
  ContainerChange, ContainerOperations, ContainerPathStat, ContainerPruneReport, PutArchiveOptions, RestartOptions, StatsOptions, TopResult,
} from '../../../engine-api/container-operations.js';

/** How the Docker runtime addresses its engine: `/v<version>` for a request's version (or the engine's own), and a safe path segment. */
export interface DockerPaths {
  at(apiVersion?: string): Promise<string>;
  id(ref: string, kind?: ReferenceKind): string;
}

const flag = (b: boolean): string | undefined => (b ? '1' : undefined);

/**
 * Exec and the container operations, forwarded to the engine: its answers and errors come back
 * as it gave them; exec output is the engine's hijacked connection itself (already framed), and
 * stats and archives stream through with back-pressure.
 */
export class DockerContainerOps implements ExecOperations, ContainerOperations {
  constructor(
    private readonly http: EngineHttp,
    private readonly paths: DockerPaths,
  ) {}

  async createExec(ref: string, spec: ExecSpec, apiVersion: string): Promise<{ id: string }> {
    // The Docker runtime's writer: the body as decoded, sent on to dockerd.
    const created = await this.http.json<{ Id: string }>({ method: 'POST', path: `${await this.paths.at(apiVersion)}/containers/${this.paths.id(ref)}/exec`, body: spec.raw });
    return { id: created.Id };
  }

  async startExec(id: string, { detach, tty, consoleSize, apiVersion }: ExecStartOptions): Promise<AttachSession | undefined> {
    const prefix = await this.paths.at(apiVersion);
    const body = { Detach: detach, Tty: tty, ...(consoleSize ? { ConsoleSize: consoleSize } : {}) };
    const path = `${prefix}/exec/${this.paths.id(id, 'exec')}/start`;
    if (detach) {
      await this.http.empty({ method: 'POST', path, body });
      return undefined;
    }
    // The engine frames by the start body's Tty (not the create body's), and that Tty is sent on as given.
    const socket = await this.http.upgrade({ method: 'POST', path, body });
    return { stream: socket, multiplexed: !tty, stdin: socket };
  }

  async inspectExec(id: string, apiVersion: string): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'GET', path: `${await this.paths.at(apiVersion)}/exec/${this.paths.id(id, 'exec')}/json` });
  }

  async resizeExec(id: string, { height, width }: { height: number; width: number }): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.paths.at()}/exec/${this.paths.id(id, 'exec')}/resize`, query: { h: String(height), w: String(width) } });
  }

  async restart(ref: string, { timeout, signal }: RestartOptions): Promise<void> {
    const prefix = await this.paths.at();
    refuseOldSignal(prefix, signal);
    await this.http.empty({ method: 'POST', path: `${prefix}/containers/${this.paths.id(ref)}/restart`, query: { t: timeout === undefined ? undefined : String(timeout), signal } });
  }

  async rename(ref: string, name: string): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/rename`, query: { name } });
  }

  async removeLink(ref: string, alias: string): Promise<void> {
    await this.http.empty({ method: 'DELETE', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/${encodeURIComponent(alias)}`, query: { link: '1' } });
  }

  async pause(ref: string): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/pause` });
  }

  async unpause(ref: string): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/unpause` });
  }

  async top(ref: string, psArgs: string): Promise<TopResult> {
    return this.http.json({ method: 'GET', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/top`, query: { ps_args: psArgs } });
  }

  async stats(ref: string, { stream, oneShot, apiVersion, signal }: StatsOptions): Promise<Readable> {
    return this.http.send({
      method: 'GET',
      path: `${await this.paths.at(apiVersion)}/containers/${this.paths.id(ref)}/stats`,
      query: { stream: stream ? '1' : '0', 'one-shot': flag(oneShot) },
      signal,
    });
  }

  async pruneContainers(filters: EngineFilters, apiVersion: string): Promise<ContainerPruneReport> {
    return this.http.json({ method: 'POST', path: `${await this.paths.at(apiVersion)}/containers/prune`, query: { filters: filtersJson(filters) } });
  }

  async changes(ref: string): Promise<ContainerChange[]> {
    return this.http.json({ method: 'GET', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/changes` });
  }

  async update(ref: string, body: Record<string, unknown>): Promise<{ Warnings: string[] | null }> {
    return this.http.json({ method: 'POST', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/update`, body });
  }

  async statPath(ref: string, path: string): Promise<ContainerPathStat> {
    const prefix = await this.paths.at();
    try {
      const res = await this.http.send({ method: 'HEAD', path: `${prefix}/containers/${this.paths.id(ref)}/archive`, query: { path } });
      res.resume();
      return decodeStat(res.headers['x-docker-container-path-stat']);
    } catch (error) {
      // A HEAD answer has no body, so the engine's 404 says nothing: tell a missing container from a missing path.
      if (error instanceof EngineError && error.status === 404) {
        await this.http.empty({ method: 'GET', path: `${prefix}/containers/${this.paths.id(ref)}/json` });
        throw EngineError.notFound(`Could not find the file ${path} in container ${ref}`);
      }
      throw error;
    }
  }

  async getArchive(ref: string, path: string, signal: AbortSignal): Promise<{ stat: ContainerPathStat; tar: Readable }> {
    const res = await this.http.send({ method: 'GET', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/archive`, query: { path }, signal });
    return { stat: decodeStat(res.headers['x-docker-container-path-stat']), tar: res };
  }

  async putArchive(ref: string, path: string, tar: Readable, { noOverwriteDirNonDir, copyUIDGID, signal }: PutArchiveOptions): Promise<void> {
    const res = await this.http.send({
      method: 'PUT',
      path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/archive`,
      query: { path, noOverwriteDirNonDir: flag(noOverwriteDirNonDir), copyUIDGID: flag(copyUIDGID) },
      stream: tar,
      signal,
    });
    await readAll(res);
  }

  /** The engine's export tar, piped through as it comes (never held in memory). */
  async exportContainer(ref: string, signal: AbortSignal): Promise<Readable> {
    return this.http.send({ method: 'GET', path: `${await this.paths.at()}/containers/${this.paths.id(ref)}/export`, signal });
  }
}

/** An engine older than API 1.42 would ignore a stop `signal`: refused rather than dropped. */
export function refuseOldSignal(prefix: string, signal: string | undefined): void {
  if (signal !== undefined && apiVersionLessThan(prefix.slice(2), '1.42')) {
    throw EngineError.invalidParameter(`signal is not supported by the engine behind the docker runtime (API ${prefix.slice(2)} < 1.42)`);
  }
}

function decodeStat(header: string | string[] | undefined): ContainerPathStat {
  const text = Array.isArray(header) ? header[0] : header;
  if (!text) throw EngineError.system('engine sent no X-Docker-Container-Path-Stat header');
  return JSON.parse(Buffer.from(text, 'base64').toString('utf8')) as ContainerPathStat;
}

function filtersJson(filters: EngineFilters): string | undefined {
  if (filters.size === 0) return undefined;
  const out: Record<string, Record<string, boolean>> = {};
  for (const [k, values] of filters) out[k] = Object.fromEntries([...values].map((v) => [v, true]));
  return JSON.stringify(out);
}
