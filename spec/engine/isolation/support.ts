import { afterAll } from '@jest/globals';
import express from 'express';
import type { Request } from 'express';
import { createServer, request as httpRequest, type RequestListener, type Server } from 'node:http';
import { pack } from 'tar-stream';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminPredicate, engineRouter, FrameDecoder, tenancyPolicy, type EngineCaller, type TenancyPolicyOptions } from '../../../lib/engine/index.js';
import { sandboxRuntime, type SandboxRuntimeOptions } from '../../../lib/engine/runtime/sandbox/index.js';
import { hasBwrap } from '../sandbox-socket.js';

/** Callers name themselves in `X-Spec-User` (the host's caller function); `alice` administers, everyone else is a tenant. */
const callerFromHeader = (req: Request): EngineCaller => {
  const user = req.headers['x-spec-user'];
  return typeof user === 'string' ? { subject: user, claims: {}, access: [] } : { claims: {}, access: [] };
};

export interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer; json: any }

/**
 * The real sandbox runtime (user namespace, seccomp, its own networks) behind engineRouter with
 * tenancyPolicy, on loopback TCP: the setup a tenant attacks. `alice` is the administrator.
 * Undefined parts when bwrap is missing (the specs skip through `bwrap` of sandbox-socket.ts).
 */
export function tenantSandbox(prefix: string, options: { runtime?: SandboxRuntimeOptions; policy?: TenancyPolicyOptions } = {}) {
  const stateDir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const runtime = hasBwrap ? sandboxRuntime({ stateDir, ...options.runtime }) : undefined;
  let server: Server | undefined;
  const listening: Promise<number> | undefined = runtime ? new Promise((resolve) => {
    const app = express();
    app.use(engineRouter(runtime, '1.24-1.43', { policy: tenancyPolicy({ admin: adminPredicate({ subjects: ['alice'] }), ...options.policy }), caller: callerFromHeader }));
    server = app.listen(0, '127.0.0.1', () => resolve((server!.address() as { port: number }).port));
  }) : undefined;
  afterAll(async () => {
    await runtime?.close?.();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  });

  /** One request as `user`: a JSON body for an object, raw bytes for a Buffer (with its content type). */
  async function call(user: string, method: string, path: string, body?: object | Buffer, contentType = 'application/x-tar', extraHeaders: Record<string, string> = {}): Promise<Answer> {
    const port = await listening!;
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = { ...extraHeaders, 'X-Spec-User': user };
    if (payload) Object.assign(headers, { 'Content-Type': Buffer.isBuffer(body) ? contentType : 'application/json', 'Content-Length': payload.length });
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path: `/v1.41${path}`, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const all = Buffer.concat(chunks);
          let json: unknown;
          try {
            json = all.length > 0 ? JSON.parse(all.toString()) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all, json });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Creates and starts a busybox container as `user`; its id (throws with the answer when refused). */
  async function start(user: string, body: object, name?: string): Promise<string> {
    const created = await call(user, 'POST', `/containers/create${name ? `?name=${name}` : ''}`, { Image: 'busybox', ...body });
    if (created.status !== 201) throw new Error(`create as ${user}: ${created.status} ${created.body.toString()}`);
    const id = created.json.Id as string;
    const started = await call(user, 'POST', `/containers/${id}/start`);
    if (started.status !== 204) throw new Error(`start as ${user}: ${started.status} ${started.body.toString()}`);
    return id;
  }

  /** Runs a busybox container to its end as `user`: id, exit code and output. */
  async function run(user: string, body: object): Promise<{ id: string; code: number; out: string }> {
    const id = await start(user, body);
    const code = (await call(user, 'POST', `/containers/${id}/wait`)).json.StatusCode as number;
    const logs = await call(user, 'GET', `/containers/${id}/logs?stdout=1&stderr=1`);
    return { id, code, out: new FrameDecoder().push(logs.body).map((f) => f.payload.toString()).join('') };
  }

  return { stateDir, runtime, call, start, run };
}

/** A tar entry as a spec hand-crafts it: a file (the default), a directory, a symbolic or a hard link. */
export type TarEntry = { name: string; type?: 'file' | 'directory' | 'symlink' | 'link'; mode?: number; body?: string | Buffer; linkname?: string };

/** A tar of `entries`, in order, as a tenant would craft it (`docker build - < ctx.tar`, `docker load`). */
export async function tarOf(entries: readonly TarEntry[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  const ended = (async () => {
    for await (const c of archive as unknown as AsyncIterable<Buffer>) chunks.push(c);
  })();
  for (const e of entries) {
    const header = { name: e.name, type: e.type ?? 'file', mode: e.mode ?? 0o644, ...(e.linkname ? { linkname: e.linkname } : {}) };
    if ((e.type ?? 'file') === 'file') archive.entry(header, e.body ?? '');
    else archive.entry(header);
  }
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

/** A build context holding only a Dockerfile. */
export const contextOf = (dockerfile: string): Promise<Buffer> => tarOf([{ name: 'Dockerfile', body: dockerfile }]);

/**
 * An HTTP server on the host's loopback that counts the connections it gets (what a tenant must
 * not reach), closed after the file's specs.
 */
export function countingServer(handler: RequestListener) {
  const server = createServer(handler);
  const counter = { reached: 0, port: undefined as unknown as Promise<number> };
  server.on('connection', () => counter.reached++);
  counter.port = new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  return counter;
}
