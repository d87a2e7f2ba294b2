import { test, expect, afterAll } from '@jest/globals';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const opened: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const close of opened) await close();
});

async function engine(dir: string): Promise<{ socket: string; close: () => Promise<void> }> {
  const runtime: ContainerRuntime = sandboxRuntime({ stateDir: dir });
  const listening = await listenOnSocket(runtime, { min: '1.12', max: '1.41' });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await runtime.close?.();
    await listening.close();
  };
  opened.push(close);
  return { socket: listening.socket, close };
}
const json = (b: Buffer): any => JSON.parse(b.toString());
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
async function run(socket: string, name: string, body: object): Promise<string> {
  const created = await socketRequest(socket, 'POST', `/v1.41/containers/create?name=${name}`, { Image: 'busybox', ...body });
  expect(created.status).toBe(201);
  const id = json(created.body).Id as string;
  expect((await socketRequest(socket, 'POST', `/v1.41/containers/${id}/start`)).status).toBe(204);
  return id;
}
const inspect = async (socket: string, id: string): Promise<any> => json((await socketRequest(socket, 'GET', `/v1.41/containers/${id}/json`)).body);
async function until(socket: string, id: string, check: (c: any) => boolean, ms = 8000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const c = await inspect(socket, id);
    if (check(c) || Date.now() > end) return c;
    await sleep(50);
  }
}
const MS = 1e6;

d('sandbox runtime: the healthcheck runs inside the container (through its exec path)', () => {
  test('a check on a file in the container is healthy, then unhealthy once the file is removed', async () => {
    const { socket } = await engine(mkdtempSync(join(tmpdir(), 'dockgate-health-')));
    const id = await run(socket, `dg-health-${Date.now()}`, {
      Cmd: ['sh', '-c', 'echo inside-the-container > /ready; sleep 60'],
      Healthcheck: { Test: ['CMD-SHELL', 'cat /ready'], Interval: 100 * MS, Retries: 2 },
    });
    const healthy = await until(socket, id, (c) => c.State.Health?.Status === 'healthy');
    expect(healthy.State.Health.Status).toBe('healthy');
    // The probe saw the container's own filesystem, not the server's.
    expect(healthy.State.Health.Log.at(-1)).toMatchObject({ ExitCode: 0, Output: 'inside-the-container\n' });
    const exec = json((await socketRequest(socket, 'POST', `/v1.41/containers/${id}/exec`, { Cmd: ['rm', '/ready'] })).body).Id as string;
    await socketRequest(socket, 'POST', `/v1.41/exec/${exec}/start`, { Detach: true });
    const unhealthy = await until(socket, id, (c) => c.State.Health?.Status === 'unhealthy');
    expect(unhealthy.State.Health).toMatchObject({ Status: 'unhealthy' });
    expect(unhealthy.State.Health.FailingStreak).toBeGreaterThanOrEqual(2);
    await socketRequest(socket, 'DELETE', `/v1.41/containers/${id}?force=1`);
  });
});

d('sandbox runtime: restart policies, and what a server restart brings back', () => {
  test('always brings a crashed container back; docker stop keeps it down', async () => {
    const { socket } = await engine(mkdtempSync(join(tmpdir(), 'dockgate-restart-policy-')));
    const id = await run(socket, `dg-always-${Date.now()}`, {
      Cmd: ['sh', '-c', 'test -e /crashed || { touch /crashed; exit 3; }; sleep 60'],
      HostConfig: { RestartPolicy: { Name: 'always' } },
    });
    const back = await until(socket, id, (c) => c.State.Status === 'running' && c.RestartCount === 1);
    expect(back.State).toMatchObject({ Status: 'running', Running: true });
    expect(back.RestartCount).toBe(1);
    expect((await socketRequest(socket, 'POST', `/v1.41/containers/${id}/stop?t=1`)).status).toBe(204);
    await sleep(500);
    expect((await inspect(socket, id)).State).toMatchObject({ Status: 'exited', Running: false, Restarting: false });
  });
  test('after a server restart: always and a running unless-stopped come back; a stopped unless-stopped and no stay down', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-restart-server-'));
    const first = await engine(dir);
    const stamp = Date.now();
    const always = await run(first.socket, `dg-srv-always-${stamp}`, { Cmd: ['sleep', '60'], HostConfig: { RestartPolicy: { Name: 'always' } } });
    const unless = await run(first.socket, `dg-srv-unless-${stamp}`, { Cmd: ['sleep', '60'], HostConfig: { RestartPolicy: { Name: 'unless-stopped' } } });
    const stopped = await run(first.socket, `dg-srv-stopped-${stamp}`, { Cmd: ['sleep', '60'], HostConfig: { RestartPolicy: { Name: 'unless-stopped' } } });
    const none = await run(first.socket, `dg-srv-none-${stamp}`, { Cmd: ['sleep', '60'] });
    expect((await socketRequest(first.socket, 'POST', `/v1.41/containers/${stopped}/stop?t=1`)).status).toBe(204);
    await first.close();
    const second = await engine(dir);
    expect((await until(second.socket, always, (c) => c.State.Status === 'running')).State.Status).toBe('running');
    expect((await until(second.socket, unless, (c) => c.State.Status === 'running')).State.Status).toBe('running');
    await sleep(300);
    expect((await inspect(second.socket, stopped)).State.Running).toBe(false);
    expect((await inspect(second.socket, none)).State.Running).toBe(false);
    for (const id of [always, unless, stopped, none]) await socketRequest(second.socket, 'DELETE', `/v1.41/containers/${id}?force=1`);
  });
});
