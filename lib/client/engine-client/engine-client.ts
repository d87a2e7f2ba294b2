import type { Writable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { apiVersionLessThan, compareApiVersions, isApiVersion, minApiVersion } from '../../engine-api/api-version.js';
import { demultiplex } from '../../engine-api/stdcopy.js';
import type { ContainerCreateBody, WaitCondition, WaitResult } from '../../engine-api/runtime-types.js';
import { EngineClientError } from './engine-client-error.js';
import { EngineHttp, readAll, type EngineEndpoint } from '../engine-http/engine-http.js';
import { drainOrClose } from '../../engine-api/drain-or-close.js';

/** The newest API version this client speaks. */
export const ENGINE_CLIENT_API_VERSION = '1.41';

/** Options of {@link EngineClient}. */
export interface EngineClientOptions {
  /** Daemon socket. Defaults to `/var/run/docker.sock` when `baseUrl` is not given. */
  socketPath?: string;
  /** Daemon base URL for TCP, e.g. `http://127.0.0.1:2375`. Defaults to none (use `socketPath`). */
  baseUrl?: string;
  /** API version to use (overridden by the ENGINE_API_VERSION environment variable). Defaults to negotiation. */
  version?: string;
  /** Environment read for ENGINE_API_VERSION. Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Output of a finished `logs` call, demultiplexed. */
export interface ContainerOutput {
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * A small version-aware engine client. Its API version comes from ENGINE_API_VERSION when set
 * (even if the daemon supports newer), else the constructor's `version`, else negotiation:
 * the lower of the daemon's `ApiVersion` and {@link ENGINE_CLIENT_API_VERSION}. It refuses a
 * daemon whose `MinAPIVersion` is above that version. `version` holds the result after `connect()`
 * (called by every method).
 *
 * @example
 * const client = new EngineClient({ socketPath: '/run/dockgate.sock' });
 * const { Id } = await client.createContainer({ Image: 'busybox', Cmd: ['echo', 'hi'] });
 * await client.start(Id);
 * await client.wait(Id);
 * (await client.logs(Id)).stdout.toString(); // 'hi\n'
 */
export class EngineClient {
  private readonly http: EngineHttp;
  private readonly fixed?: string;
  private connecting?: Promise<string>;
  /** The API version in use, once settled. */
  version?: string;

  constructor(options: EngineClientOptions = {}) {
    const endpoint: EngineEndpoint = options.baseUrl ? { baseUrl: options.baseUrl } : { socketPath: options.socketPath ?? '/var/run/docker.sock' };
    this.http = new EngineHttp(endpoint);
    const fromEnv = (options.env ?? process.env).ENGINE_API_VERSION;
    if (fromEnv !== undefined && fromEnv !== '' && !isApiVersion(fromEnv)) throw new TypeError(`ENGINE_API_VERSION "${fromEnv}" must look like "1.41"`);
    if (options.version !== undefined && !isApiVersion(options.version)) throw new TypeError('EngineClient option "version" must look like "1.41"');
    this.fixed = fromEnv || options.version;
  }

  /** Settles the API version (once) and checks the daemon accepts it. */
  connect(): Promise<string> {
    this.connecting ??= this.settle().catch((error: unknown) => {
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  private async settle(): Promise<string> {
    // `/version` unversioned is served at the daemon's newest API and states its minimum.
    const info = await this.http.json<{ ApiVersion?: string; MinAPIVersion?: string }>({ method: 'GET', path: '/version' });
    const daemonMax = isApiVersion(info.ApiVersion) ? info.ApiVersion : '1.24';
    const version = this.fixed ?? minApiVersion(daemonMax, ENGINE_CLIENT_API_VERSION);
    if (isApiVersion(info.MinAPIVersion) && apiVersionLessThan(version, info.MinAPIVersion)) {
      throw new EngineClientError(
        `API version ${version} is not supported by the daemon: its minimum API version is ${info.MinAPIVersion} (this client speaks up to ${ENGINE_CLIENT_API_VERSION})`,
      );
    }
    this.version = version;
    return version;
  }

  private async path(p: string): Promise<string> {
    return `/v${await this.connect()}${p}`;
  }

  /** `POST /containers/create`. */
  async createContainer(body: ContainerCreateBody, options: { name?: string } = {}): Promise<{ Id: string; Warnings: string[] | null }> {
    return this.http.json({ method: 'POST', path: await this.path('/containers/create'), query: { name: options.name }, body });
  }

  /** `POST /containers/{id}/start`; an already running container is not an error. */
  async start(id: string): Promise<void> {
    try {
      (await this.http.send({ method: 'POST', path: await this.path(`/containers/${encodeURIComponent(id)}/start`) })).resume();
    } catch (error) {
      if ((error as { status?: number }).status !== 304) throw error;
    }
  }

  /** `POST /containers/{id}/wait`; `condition` is sent only from API 1.30, where it exists. */
  async wait(id: string, condition?: WaitCondition): Promise<WaitResult> {
    const path = await this.path(`/containers/${encodeURIComponent(id)}/wait`);
    const useCondition = condition !== undefined && compareApiVersions(this.version!, '1.30') >= 0;
    return this.http.json({ method: 'POST', path, query: { condition: useCondition ? condition : undefined } });
  }

  /** `GET /containers/{id}/logs` of a finished run (or until the container stops with `follow`), demultiplexed. */
  async logs(id: string, options: { stdout?: boolean; stderr?: boolean; follow?: boolean; tail?: number; timestamps?: boolean } = {}): Promise<ContainerOutput> {
    const out = new PassThrough();
    const err = new PassThrough();
    const collected = Promise.all([readAll(out), readAll(err)]);
    await this.streamLogs(id, out, err, options);
    out.end();
    err.end();
    const [stdout, stderr] = await collected;
    return { stdout, stderr };
  }

  /** Streams logs into two writables (demultiplexed unless the container has a TTY). */
  async streamLogs(
    id: string,
    stdout: Writable,
    stderr: Writable,
    options: { stdout?: boolean; stderr?: boolean; follow?: boolean; tail?: number; timestamps?: boolean } = {},
  ): Promise<void> {
    const ref = encodeURIComponent(id);
    const info = await this.http.json<{ Config?: { Tty?: boolean } }>({ method: 'GET', path: await this.path(`/containers/${ref}/json`) });
    const flag = (b: boolean | undefined, dflt: boolean): string | undefined => ((b ?? dflt) ? '1' : undefined);
    const res = await this.http.send({ method: 'GET', path: await this.path(`/containers/${ref}/logs`), query: {
      stdout: flag(options.stdout, true),
      stderr: flag(options.stderr, true),
      follow: flag(options.follow, false),
      timestamps: flag(options.timestamps, false),
      tail: options.tail === undefined ? undefined : String(options.tail),
    } });
    if (info.Config?.Tty === true) {
      for await (const chunk of res) {
        if (stdout.write(chunk)) continue;
        await drainOrClose(stdout);
        if (stdout.destroyed) return;
      }
      return;
    }
    await demultiplex(res, stdout, stderr);
  }

  /** `DELETE /containers/{id}`. */
  async remove(id: string, options: { force?: boolean } = {}): Promise<void> {
    (await this.http.send({ method: 'DELETE', path: await this.path(`/containers/${encodeURIComponent(id)}`), query: { force: options.force ? '1' : undefined } })).resume();
  }

  /** Closes kept-alive connections. */
  close(): void {
    this.http.close();
  }
}
