import express from 'express';
import { request as httpRequest } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineRouter, listenEngine, type ContainerRuntime, type EngineListener } from '../../lib/engine/index.js';
import { scriptedRuntime } from '../../lib/engine/runtime/scripted/index.js';
import type { VersionRangeInput } from '../../lib/engine-api/version-range.js';

/** A scripted runtime whose image `busybox` echoes its arguments, `fail` exits 3 with stderr, `slow` waits for a release. */
export function testRuntime(): { runtime: ContainerRuntime; release: () => void } {
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const runtime = scriptedRuntime({
    images: {
      'busybox:latest': ({ argv }) => ({ stdout: `${argv.slice(1).join(' ')}\n` }),
      'fail:1': () => ({ stdout: 'out\n', stderr: 'err\n', exitCode: 3 }),
      'slow:1': async ({ write }) => {
        write(1, 'started\n');
        await gate;
        return { stdout: 'done\n', exitCode: 7 };
      },
    },
  });
  return { runtime, release: () => release() };
}

export function testApp(runtime: ContainerRuntime, range?: VersionRangeInput): express.Express {
  const app = express();
  app.use(engineRouter(runtime, range));
  return app;
}

export function tempSocket(name = 'engine.sock'): string {
  return join(mkdtempSync(join(tmpdir(), 'dockgate-')), name);
}

export async function listenOnSocket(runtime: ContainerRuntime, range?: VersionRangeInput): Promise<EngineListener & { socket: string }> {
  const socket = tempSocket();
  const listener = await listenEngine(testApp(runtime, range), { socket });
  return { ...listener, socket };
}

/** A plain HTTP request over a Unix socket; resolves status, headers and the whole body. */
export function socketRequest(
  socket: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = httpRequest(
      { socketPath: socket, method, path, headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * A runtime made by `make` and served on a socket on first use (`socket()`), so a describe whose
 * peer is absent never makes one; `close()` (for afterAll) closes what was made.
 */
export function lazySocket(make: () => ContainerRuntime): { socket: () => Promise<string>; close: () => Promise<void> } {
  let runtime: ContainerRuntime | undefined;
  let listening: ReturnType<typeof listenOnSocket> | undefined;
  return {
    socket: async () => (await (listening ??= listenOnSocket((runtime = make())))).socket,
    close: async () => {
      await (await listening)?.close();
      await runtime?.close?.();
    },
  };
}
