import { Readable } from 'node:stream';
import type { RegistryLoginRequest, RegistryLoginResult } from '../../images/registry/registry-login.js';
import { holdArchive } from '../../images/archive/hold-archive.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { apiVersionAtLeast, isApiVersion, minApiVersion } from '../../../engine-api/api-version.js';
import type {
  AttachOptions, AttachSession, ContainerRuntime, CreateRequest, EngineEvent, EventsOptions, ListOptions,
  LogsOptions, OutputStream, PullRequest, RemoveOptions, StopOptions, WaitCondition, WaitHandle, WaitResult,
} from '../../../engine-api/runtime-types.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import { EngineHttp, readAll } from '../../../client/engine-http/engine-http.js';
import { pathSegment, type ReferenceKind } from './path-segment.js';
import type { ImageDeleteItem, ImageImportRequest, ImageListOptions, ImageLoadRequest, ImageOperations, ImagePruneReport, ImageRemoveOptions } from '../../../engine-api/image-operations.js';
import type { NetworkConnectBody, NetworkCreateBody, NetworkInspectOptions } from '../../../engine-api/network-operations.js';
import type { VolumeCreateBody, VolumePruneReport } from '../../../engine-api/volume-operations.js';
import type { DiskUsageOptions } from '../../../engine-api/system-operations.js';
import { DockerContainerOps, refuseOldSignal } from './docker-container-ops.js';
import { DockerImageTransfer } from './docker-image-transfer.js';
import type { BuildOperations } from '../../../engine-api/build-operations.js';
import type { ExecOperations } from '../../../engine-api/exec-operations.js';
import type { ContainerOperations } from '../../../engine-api/container-operations.js';
import { optionChecks } from '../../../options/option-checks.js';

/** Options of {@link dockerRuntime}. */
export interface DockerRuntimeOptions {
  /** The engine's Unix socket. Defaults to `/var/run/docker.sock`. */
  socketPath?: string;
  /**
   * API version dockgate speaks to the engine, whatever version its own client asked for
   * (the router adapts answers to that one). Defaults to the engine's own, read from `/_ping`
   * on first use.
   */
  apiVersion?: string;
}

/**
 * Forwards to a real engine (dockerd or Podman) over its socket, making dockgate a
 * version-gated, authenticated front for it. Output, attach and event streams are piped
 * straight through (the engine's bytes are already framed), so back-pressure reaches the engine.
 * The engine's errors come back with its status and message.
 *
 * @example
 * app.use(engineRouter(dockerRuntime({ socketPath: '/var/run/docker.sock' }), '1.12-1.41'));
 */
export function dockerRuntime(options: DockerRuntimeOptions = {}): ContainerRuntime {
  const socketPath = optionChecks('dockerRuntime').nonEmptyString(options.socketPath ?? '/var/run/docker.sock', 'socketPath');
  if (options.apiVersion !== undefined && !isApiVersion(options.apiVersion)) throw new TypeError('dockerRuntime option "apiVersion" must look like "1.41"');
  return new DockerRuntime(new EngineHttp({ socketPath }), options.apiVersion);
}

/** Every method of {@link DockerContainerOps}, each forwarded to the engine. */
const DOCKER_OPERATIONS = [
  'createExec', 'startExec', 'inspectExec', 'resizeExec', 'restart', 'rename', 'removeLink', 'pause', 'unpause', 'top', 'stats',
  'pruneContainers', 'changes', 'update', 'statPath', 'getArchive', 'putArchive', 'exportContainer',
] as const satisfies readonly (keyof ExecOperations | keyof ContainerOperations)[];

/** Containers whose TTY setting {@link DockerRuntime} remembers; the oldest is forgotten first. */
const TTY_CACHE_LIMIT = 4096;

/** Every method of {@link DockerImageTransfer}, each forwarded to the engine. */
const TRANSFER_OPERATIONS = ['pushImage', 'build', 'commit'] as const satisfies readonly (keyof DockerImageTransfer)[];

// The forwarded exec, container, build and push operations are mixed in by the constructor.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
interface DockerRuntime extends ExecOperations, ContainerOperations, BuildOperations, Pick<ImageOperations, 'pushImage'> {}
class DockerRuntime implements ContainerRuntime {
  readonly name = 'docker';
  private version?: Promise<string>;
  /**
   * Whether each container created through this runtime has a TTY (Config.Tty never changes), by
   * full id: logs and attach need it to tell framed output from raw, and it spares them an inspect
   * per call. A container made elsewhere, or named by another reference, is inspected.
   */
  private readonly ttyById = new Map<string, boolean>();

  constructor(
    private readonly http: EngineHttp,
    pinned?: string,
  ) {
    if (pinned) this.version = Promise.resolve(pinned);
    // Exec and the container operations live in docker-container-ops.ts.
    const ops = new DockerContainerOps(http, { at: (v) => (v ? this.at(v) : this.prefix()), id: (ref, kind) => this.id(ref, kind) });
    for (const method of DOCKER_OPERATIONS) Object.assign(this, { [method]: ops[method].bind(ops) });
    // Build, commit and push live in docker-image-transfer.ts.
    const transfer = new DockerImageTransfer(http, { at: (v) => this.at(v), id: (ref, kind) => this.id(ref, kind) });
    for (const method of TRANSFER_OPERATIONS) Object.assign(this, { [method]: transfer[method].bind(transfer) });
  }

  /** `/v<version>` prefix; the engine's own version is learnt once from `/_ping`. */
  private async prefix(): Promise<string> {
    this.version ??= this.http.send({ method: 'GET', path: '/_ping' }).then((res) => {
      res.resume();
      const v = res.headers['api-version'];
      return typeof v === 'string' && isApiVersion(v) ? v : '1.24';
    });
    this.version.catch(() => (this.version = undefined));
    return `/v${await this.version}`;
  }

  /**
   * `/v<version>` for a request served at `apiVersion`: the client's own version when the engine
   * speaks it, so the engine applies its per-version rules itself (fields added or dropped
   * between 1.24 and 1.43); the engine's version when the client asked for a newer one.
   */
  private async at(apiVersion: string): Promise<string> {
    const own = (await this.prefix()).slice(2);
    return `/v${minApiVersion(apiVersion, own)}`;
  }

  /** One path segment for a reference: encoded, and never a `..` that the engine would resolve to another endpoint (path-segment.ts). */
  private id(ref: string, kind?: ReferenceKind): string {
    return pathSegment(ref, kind);
  }

  async create({ name, spec }: CreateRequest): Promise<{ id: string; warnings: string[] }> {
    const created = await this.http.json<{ Id: string; Warnings?: string[] | null }>({
      method: 'POST',
      path: `${await this.prefix()}/containers/create`,
      query: { name },
      // dockerd's JSON: the body as sent (after the route's version shims), every field it knows kept.
      body: spec.raw,
    });
    if (this.ttyById.size >= TTY_CACHE_LIMIT) this.ttyById.delete(this.ttyById.keys().next().value!);
    this.ttyById.set(created.Id, (spec.raw as { Tty?: unknown } | undefined)?.Tty === true);
    return { id: created.Id, warnings: created.Warnings ?? [] };
  }

  async start(ref: string): Promise<void> {
    const res = await this.http.send({ method: 'POST', path: `${await this.prefix()}/containers/${this.id(ref)}/start` }).catch((error: unknown) => {
      // The agent turns 304 into an error like any status >= 300; it is "already started".
      if (error instanceof EngineError && error.status === 304) throw EngineError.notModified('Container is already started');
      throw error;
    });
    res.resume();
  }

  async wait(ref: string, condition: WaitCondition, signal?: AbortSignal): Promise<WaitHandle> {
    const prefix = await this.prefix();
    const res = await this.http.send({
      method: 'POST',
      path: `${prefix}/containers/${this.id(ref)}/wait`,
      query: { condition: apiVersionAtLeast(prefix.slice(2), '1.30') ? condition : undefined },
      ...(signal ? { signal } : {}),
    });
    // dockerd sends the status line once the wait is registered, the body at exit.
    const result = readAll(res).then((b) => JSON.parse(b.toString('utf8')) as WaitResult);
    result.catch(() => undefined);
    return { result };
  }

  async logs(ref: string, options: LogsOptions): Promise<OutputStream> {
    const prefix = await this.prefix();
    const bool = (b: boolean): string | undefined => (b ? '1' : undefined);
    const [res, multiplexed] = await Promise.all([
      this.http.send({
        method: 'GET',
        path: `${prefix}/containers/${this.id(ref)}/logs`,
        query: {
          stdout: bool(options.stdout),
          stderr: bool(options.stderr),
          follow: bool(options.follow),
          timestamps: bool(options.timestamps),
          tail: options.tail === undefined ? undefined : String(options.tail),
          since: seconds(options.since),
          until: seconds(options.until),
        },
        ...(options.signal ? { signal: options.signal } : {}),
      }),
      this.multiplexed(prefix, ref),
    ]);
    return { stream: res, multiplexed };
  }

  /** Whether output is framed: the container has no TTY. */
  private async multiplexed(prefix: string, ref: string): Promise<boolean> {
    const tty = this.ttyById.get(ref);
    if (tty !== undefined) return !tty;
    const info = await this.http.json<{ Config?: { Tty?: boolean } }>({ method: 'GET', path: `${prefix}/containers/${this.id(ref)}/json` });
    return info.Config?.Tty !== true;
  }

  async attach(ref: string, options: AttachOptions): Promise<AttachSession> {
    const prefix = await this.prefix();
    const bool = (b: boolean): string | undefined => (b ? '1' : undefined);
    const multiplexed = await this.multiplexed(prefix, ref);
    const socket = await this.http.upgrade({
      method: 'POST',
      path: `${prefix}/containers/${this.id(ref)}/attach`,
      query: { stdin: bool(options.stdin), stdout: bool(options.stdout), stderr: bool(options.stderr), logs: bool(options.logs), stream: bool(options.stream) },
    });
    return { stream: socket, multiplexed, ...(options.stdin ? { stdin: socket } : {}) };
  }

  async inspect(ref: string): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'GET', path: `${await this.prefix()}/containers/${this.id(ref)}/json` });
  }

  async list({ all, limit, filters }: ListOptions): Promise<Record<string, unknown>[]> {
    return this.http.json({
      method: 'GET',
      path: `${await this.prefix()}/containers/json`,
      query: { all: all ? '1' : undefined, limit: limit === undefined ? undefined : String(limit), filters: filtersJson(filters) },
    });
  }

  async remove(ref: string, { force, volumes }: RemoveOptions): Promise<void> {
    await this.http.empty({
      method: 'DELETE',
      path: `${await this.prefix()}/containers/${this.id(ref)}`,
      query: { force: force ? '1' : undefined, v: volumes ? '1' : undefined },
    });
    this.ttyById.delete(ref);
  }

  async kill(ref: string, signal: NodeJS.Signals): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.prefix()}/containers/${this.id(ref)}/kill`, query: { signal } });
  }

  /** `POST /auth` forwarded: dockerd logs in and answers with its own status and words. */
  async login(request: RegistryLoginRequest): Promise<RegistryLoginResult> {
    return this.http.json<RegistryLoginResult>({ method: 'POST', path: `${await this.prefix()}/auth`, body: request });
  }

  async resize(ref: string, { height, width }: { height: number; width: number }): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.prefix()}/containers/${this.id(ref)}/resize`, query: { h: String(height), w: String(width) } });
  }

  async stop(ref: string, { timeout, signal }: StopOptions): Promise<void> {
    const prefix = await this.prefix();
    refuseOldSignal(prefix, signal);
    // 304 (already stopped) comes back as a NotModified EngineError and is answered as such.
    await this.http.empty({
      method: 'POST',
      path: `${prefix}/containers/${this.id(ref)}/stop`,
      query: { t: timeout === undefined ? undefined : String(timeout), signal },
    });
  }

  /**
   * The engine's own pull: its JSON-lines progress comes back byte for byte, and its errors
   * (an unknown repository, no route to the registry) with its status and words.
   */
  async pull({ fromImage, tag, platform, registryAuth, signal }: PullRequest): Promise<Readable> {
    const prefix = await this.prefix();
    return this.http.send({
      method: 'POST',
      path: `${prefix}/images/create`,
      query: { fromImage, tag, platform: apiVersionAtLeast(prefix.slice(2), '1.32') ? platform : undefined },
      ...(registryAuth ? { headers: { 'X-Registry-Auth': registryAuth } } : {}),
      signal,
    });
  }

  async listImages({ all, filters, digests, sharedSize, apiVersion }: ImageListOptions): Promise<Record<string, unknown>[]> {
    return this.http.json({
      method: 'GET',
      path: `${await this.at(apiVersion)}/images/json`,
      query: { all: flag(all), filters: filtersJson(filters), digests: flag(digests), 'shared-size': flag(sharedSize) },
    });
  }

  async inspectImage(ref: string, apiVersion: string): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/images/${this.id(ref, 'image')}/json` });
  }

  async imageHistory(ref: string, apiVersion: string): Promise<Record<string, unknown>[]> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/images/${this.id(ref, 'image')}/history` });
  }

  async tagImage(ref: string, target: string): Promise<void> {
    const colon = target.lastIndexOf(':');
    await this.http.empty({
      method: 'POST',
      path: `${await this.prefix()}/images/${this.id(ref, 'image')}/tag`,
      query: { repo: target.slice(0, colon), tag: target.slice(colon + 1) },
    });
  }

  async removeImage(ref: string, { force, noprune, apiVersion }: ImageRemoveOptions): Promise<ImageDeleteItem[]> {
    return this.http.json({
      method: 'DELETE',
      path: `${await this.at(apiVersion)}/images/${this.id(ref, 'image')}`,
      query: { force: flag(force), noprune: flag(noprune) },
    });
  }

  async pruneImages(filters: EngineFilters, apiVersion: string): Promise<ImagePruneReport> {
    return this.http.json({ method: 'POST', path: `${await this.at(apiVersion)}/images/prune`, query: { filters: filtersJson(filters) } });
  }

  /** The engine's tarball, piped through as it comes (never held in memory). */
  async saveImages(refs: string[], signal: AbortSignal): Promise<Readable> {
    return this.http.send({ method: 'GET', path: `${await this.prefix()}/images/get`, query: { names: refs }, signal });
  }

  /**
   * The client's tarball is streamed to the engine; its JSON-lines answer comes back as it is.
   * Under a policy (`checkNames`) it is held on disk first and its names judged (see holdArchive).
   */
  async loadImages({ tar, quiet, apiVersion, signal, checkNames }: ImageLoadRequest): Promise<Readable> {
    let stream = tar;
    if (checkNames) {
      // dockerd is the loader here: the archive is held and its names judged before it gets a byte.
      const held = await holdArchive(tar);
      try {
        await checkNames(held.names);
      } catch (error) {
        held.stream.destroy();
        throw error;
      }
      stream = held.stream;
    }
    return this.http.send({ method: 'POST', path: `${await this.at(apiVersion)}/images/load`, query: { quiet: quiet ? '1' : '0' }, stream, signal });
  }

  /**
   * `docker import`: the tar is streamed to the engine as `fromSrc=-` (a URL was fetched by the
   * route, so its default comment is sent as the message); answers the ID from its last status line.
   */
  async importImage({ tar, source, ref, message, changes, apiVersion, signal }: ImageImportRequest): Promise<string> {
    const comment = message ?? (source === '-' ? undefined : `Imported from ${source}`);
    const answer = await this.http.send({
      method: 'POST',
      path: `${await this.at(apiVersion)}/images/create`,
      query: { fromSrc: '-', ...(ref ? { repo: ref } : {}), ...(comment !== undefined ? { message: comment } : {}), ...(changes.length > 0 ? { changes } : {}) },
      stream: tar,
      signal,
    });
    let text = '';
    for await (const chunk of answer) text += (chunk as Buffer).toString();
    let id: string | undefined;
    for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
      const parsed = JSON.parse(line) as { status?: string; error?: string };
      if (parsed.error !== undefined) throw EngineError.invalidParameter(parsed.error);
      if (typeof parsed.status === 'string' && parsed.status.startsWith('sha256:')) id = parsed.status;
    }
    if (!id) throw EngineError.system('the engine answered the import without an image ID');
    return id;
  }

  async listNetworks(filters: EngineFilters, apiVersion: string): Promise<Record<string, unknown>[]> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/networks`, query: { filters: filtersJson(filters) } });
  }

  async inspectNetwork(ref: string, { verbose, scope, apiVersion }: NetworkInspectOptions): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/networks/${this.id(ref, 'network')}`, query: { verbose: flag(verbose), scope } });
  }

  async createNetwork(body: NetworkCreateBody, apiVersion: string): Promise<{ Id: string; Warning: string }> {
    return this.http.json({ method: 'POST', path: `${await this.at(apiVersion)}/networks/create`, body });
  }

  async removeNetwork(ref: string): Promise<void> {
    await this.http.empty({ method: 'DELETE', path: `${await this.prefix()}/networks/${this.id(ref, 'network')}` });
  }

  async pruneNetworks(filters: EngineFilters): Promise<{ NetworksDeleted: string[] | null }> {
    return this.http.json({ method: 'POST', path: `${await this.prefix()}/networks/prune`, query: { filters: filtersJson(filters) } });
  }

  async connectNetwork(ref: string, body: NetworkConnectBody): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.prefix()}/networks/${this.id(ref, 'network')}/connect`, body });
  }

  async disconnectNetwork(ref: string, container: string, force: boolean): Promise<void> {
    await this.http.empty({ method: 'POST', path: `${await this.prefix()}/networks/${this.id(ref, 'network')}/disconnect`, body: { Container: container, Force: force } });
  }

  async listVolumes(filters: EngineFilters, apiVersion: string): Promise<{ Volumes: Record<string, unknown>[]; Warnings: string[] | null }> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/volumes`, query: { filters: filtersJson(filters) } });
  }

  async inspectVolume(name: string, apiVersion: string): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/volumes/${this.id(name, 'volume')}` });
  }

  async createVolume(body: VolumeCreateBody, apiVersion: string): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'POST', path: `${await this.at(apiVersion)}/volumes/create`, body });
  }

  async removeVolume(name: string, force: boolean): Promise<void> {
    await this.http.empty({ method: 'DELETE', path: `${await this.prefix()}/volumes/${this.id(name, 'volume')}`, query: { force: flag(force) } });
  }

  async pruneVolumes(filters: EngineFilters, apiVersion: string): Promise<VolumePruneReport> {
    return this.http.json({ method: 'POST', path: `${await this.at(apiVersion)}/volumes/prune`, query: { filters: filtersJson(filters) } });
  }

  async diskUsage({ types, apiVersion }: DiskUsageOptions): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/system/df`, query: { type: types.size > 0 ? [...types] : undefined } });
  }

  /** The engine's own `/info`, whole (counts, storage driver, runtimes, security options). */
  async systemInfo(apiVersion: string): Promise<Record<string, unknown>> {
    return this.http.json({ method: 'GET', path: `${await this.at(apiVersion)}/info` });
  }

  async events({ since, until, filters, signal }: EventsOptions): Promise<Readable> {
    const res = await this.http.send({
      method: 'GET',
      path: `${await this.prefix()}/events`,
      query: { since: seconds(since), until: seconds(until), filters: filtersJson(filters) },
      signal,
    });
    return Readable.from(parseLines(res), { objectMode: true });
  }

  async close(): Promise<void> {
    this.http.close();
  }
}

const flag = (b: boolean): string | undefined => (b ? '1' : undefined);

/** The Go client's "<seconds>.<nanoseconds>" form. */
function seconds(ms: number | undefined): string | undefined {
  if (ms === undefined) return undefined;
  const s = Math.floor(ms / 1000);
  return `${s}.${String(Math.min(999_999_999, Math.round((ms - s * 1000) * 1e6))).padStart(9, "0")}`;
}

function filtersJson(filters: EngineFilters): string | undefined {
  if (filters.size === 0) return undefined;
  const out: Record<string, Record<string, boolean>> = {};
  for (const [k, values] of filters) out[k] = Object.fromEntries([...values].map((v) => [v, true]));
  return JSON.stringify(out);
}

async function* parseLines(source: AsyncIterable<unknown>): AsyncGenerator<EngineEvent> {
  let pending = '';
  for await (const chunk of source) {
    pending += (chunk as Buffer).toString('utf8');
    let nl;
    while ((nl = pending.indexOf('\n')) !== -1) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line) yield JSON.parse(line) as EngineEvent;
    }
  }
}
