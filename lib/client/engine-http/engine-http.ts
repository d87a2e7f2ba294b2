import { Agent, request, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { EngineError } from '../../engine-api/engine-error.js';
import { httpUrl } from '../../options/option-checks.js';

/** One request to a real engine. */
export interface EngineRequest {
  method: string;
  path: string;
  query?: Record<string, string | string[] | undefined>;
  body?: unknown;
  /** A body streamed as it is read (an image tarball), sent chunked with `Content-Type: application/x-tar`. */
  stream?: Readable;
  /** Extra request headers (e.g. `X-Registry-Auth`, passed through untouched). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Where an engine is: its Unix socket, or an http:// base URL (TCP). */
export type EngineEndpoint = { socketPath: string } | { baseUrl: string };

/**
 * Minimal HTTP to a real engine (dockerd, Podman, or dockgate itself), with kept-alive
 * connections; used by the Docker runtime and by `EngineClient`. Non-2xx answers become
 * `EngineError`s with the engine's own status and message, so a client of dockgate sees
 * exactly what the engine said.
 */
export class EngineHttp {
  private readonly agent: Agent;
  private readonly target: { socketPath: string } | { host: string; port: number };
  /** The endpoint as people name it, for error messages. */
  private readonly where: string;

  constructor(endpoint: EngineEndpoint) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 64 });
    if ('socketPath' in endpoint) {
      this.target = { socketPath: endpoint.socketPath };
      this.where = endpoint.socketPath;
    } else {
      const url = httpUrl(endpoint.baseUrl, 'baseUrl');
      if (url.protocol !== 'http:') throw new TypeError('"baseUrl" must be an http:// URL');
      this.target = { host: url.hostname, port: Number(url.port || 80) };
      this.where = url.origin;
    }
  }

  send(req: EngineRequest): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
      const outgoing = request(
        {
          ...this.target,
          agent: this.agent,
          method: req.method,
          path: withQuery(req.path, req.query),
          headers: {
            ...req.headers,
            ...(body ? { 'Content-Type': 'application/json', 'Content-Length': body.length } : {}),
            ...(req.stream ? { 'Content-Type': 'application/x-tar', 'Transfer-Encoding': 'chunked' } : {}),
          },
          ...(req.signal ? { signal: req.signal } : {}),
        },
        (res) => {
          if ((res.statusCode ?? 500) >= 300) {
            void toEngineError(res).then(reject, reject);
            return;
          }
          resolve(res);
        },
      );
      outgoing.on('error', (error) => reject(unreachable(this.where, error)));
      if (req.stream) {
        // pipe() keeps back-pressure: the client's upload is read only as fast as the engine takes it.
        req.stream.on('error', (error) => outgoing.destroy(error));
        req.stream.pipe(outgoing);
      } else outgoing.end(body);
    });
  }

  async json<T>(req: EngineRequest): Promise<T> {
    const res = await this.send(req);
    return JSON.parse((await readAll(res)).toString('utf8')) as T;
  }

  async empty(req: EngineRequest): Promise<void> {
    const res = await this.send(req);
    res.resume();
  }

  /** An `Upgrade: tcp` request (attach, exec start with its JSON body): resolves with the raw connection after 101. */
  upgrade(req: EngineRequest): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body));
      const outgoing = request({
        ...this.target,
        method: req.method,
        path: withQuery(req.path, req.query),
        headers: { Connection: 'Upgrade', Upgrade: 'tcp', ...(body ? { 'Content-Type': 'application/json', 'Content-Length': body.length } : {}) },
      });
      outgoing.on('upgrade', (_res, socket: Socket, head: Buffer) => {
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
      });
      outgoing.on('response', (res) => {
        if ((res.statusCode ?? 500) >= 300) void toEngineError(res).then(reject, reject);
        else reject(EngineError.system(`engine answered ${req.path} with ${res.statusCode} instead of 101`));
      });
      outgoing.on('error', (error) => reject(unreachable(this.where, error)));
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function withQuery(path: string, query: Record<string, string | string[] | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) for (const each of v) params.append(k, each);
    else if (v !== undefined) params.set(k, v);
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export async function readAll(res: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function toEngineError(res: IncomingMessage): Promise<EngineError> {
  const status = res.statusCode ?? 500;
  const text = (await readAll(res)).toString('utf8').trim();
  let message = text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') message = parsed.message;
  } catch {
    // Plain-text errors (API <= 1.23) are the message itself.
  }
  return EngineError.fromStatus(status, message || `engine answered ${status}`);
}

function unreachable(where: string, error: Error): EngineError {
  if (error.name === 'AbortError') return EngineError.system('request aborted', error);
  return new EngineError('Unavailable', `engine at ${where} is unreachable: ${(error as NodeJS.ErrnoException).code ?? error.message}`);
}
