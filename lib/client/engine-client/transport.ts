import { Agent, request, type IncomingMessage } from 'node:http';
import { EngineError } from '../../engine/errors/engine-error.js';

/** Where the daemon is: a Unix socket or an http:// base URL. */
export type EngineEndpoint = { socketPath: string } | { baseUrl: string };

/** HTTP to the daemon; non-2xx answers become EngineError with the daemon's status and message. */
export class Transport {
  private readonly agent = new Agent({ keepAlive: true });
  private readonly target: { socketPath: string } | { host: string; port: number };

  constructor(endpoint: EngineEndpoint) {
    if ('socketPath' in endpoint) this.target = { socketPath: endpoint.socketPath };
    else {
      const url = new URL(endpoint.baseUrl);
      if (url.protocol !== 'http:') throw new TypeError('EngineClient option "baseUrl" must be an http:// URL');
      this.target = { host: url.hostname, port: Number(url.port || 80) };
    }
  }

  send(method: string, path: string, query: Record<string, string | undefined> = {}, body?: unknown): Promise<IncomingMessage> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
    const qs = params.toString();
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = request(
        {
          ...this.target,
          agent: this.agent,
          method,
          path: qs ? `${path}?${qs}` : path,
          headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {},
        },
        (res) => {
          const status = res.statusCode ?? 500;
          if (status < 300) return resolve(res);
          void readBody(res).then((buf) => reject(EngineError.fromStatus(status, errorMessage(buf, status))), reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  async json<T>(method: string, path: string, query?: Record<string, string | undefined>, body?: unknown): Promise<T> {
    return JSON.parse((await readBody(await this.send(method, path, query, body))).toString('utf8')) as T;
  }

  close(): void {
    this.agent.destroy();
  }
}

export async function readBody(res: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The JSON `message` when the body is engine JSON, else the text itself (API <= 1.23 errors). */
function errorMessage(body: Buffer, status: number): string {
  const text = body.toString('utf8').trim();
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON
  }
  return text || `daemon answered ${status}`;
}
