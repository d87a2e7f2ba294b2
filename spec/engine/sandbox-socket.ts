import { afterAll, expect } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FrameDecoder } from '../../lib/engine/index.js';
import type { PeerCheck } from '../support/peers.js';
import { sandboxServer } from '../interop/support/engine-user.js';
import { socketRequest } from './helpers.js';

/** Whether the sandbox can run here: bubblewrap, and busybox for the test image. */
export const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
export const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };

/**
 * One sandbox runtime for a spec file, behind engineRouter on a Unix socket (API 1.24-1.41),
 * closed after the file's specs; undefined parts when bwrap is missing (the specs skip).
 * `call` sends JSON at API 1.41 and parses the answer; `run` creates, starts and waits for a
 * busybox container and answers its id, exit code and output.
 */
export function sandboxOnSocket(prefix: string) {
  const stateDir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  // In the rootless pass (DOCKGATE_ENGINE_USER), a process of that user (interop/support/engine-user.ts).
  const listening = hasBwrap ? sandboxServer({ stateDir }, '1.24-1.41') : undefined;
  listening?.catch(() => undefined);
  afterAll(async () => {
    await (await listening)?.close();
  });
  async function call(method: string, path: string, body?: object): Promise<{ status: number; json: any }> {
    const res = await socketRequest((await listening)!.socket, method, `/v1.41${path}`, body);
    return { status: res.status, json: res.body.length > 0 ? JSON.parse(res.body.toString()) : undefined };
  }
  async function run(body: object): Promise<{ id: string; out: string; code: number }> {
    const created = await call('POST', '/containers/create', { Image: 'busybox', ...body });
    expect(created.status).toBe(201);
    const id = created.json.Id as string;
    expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
    const code = (await call('POST', `/containers/${id}/wait`)).json.StatusCode as number;
    const logs = await socketRequest((await listening)!.socket, 'GET', `/v1.41/containers/${id}/logs?stdout=1&stderr=1`);
    return { id, code, out: new FrameDecoder().push(logs.body).map((f) => f.payload.toString()).join('') };
  }
  return { stateDir, listening, call, run };
}
