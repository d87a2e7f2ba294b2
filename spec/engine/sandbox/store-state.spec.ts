import { test, expect, afterAll } from '@jest/globals';
import { existsSync, mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { FrameDecoder, type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-sandbox-state-'));
const opened: { runtime: ContainerRuntime; close: () => Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened) await o.close();
});

async function engine(dir = stateDir): Promise<{ socket: string; runtime: ContainerRuntime; close: () => Promise<void> }> {
  const runtime = sandboxRuntime({ stateDir: dir });
  const listening = await listenOnSocket(runtime, { min: '1.12', max: '1.41' });
  const close = async () => {
    await runtime.close?.();
    await listening.close();
  };
  opened.push({ runtime, close });
  return { socket: listening.socket, runtime, close };
}
const shared = hasBwrap ? engine() : undefined;

function raw(socket: string, method: string, path: string, body?: Buffer): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath: socket, method, path, headers: body ? { 'Content-Type': 'application/x-tar', 'Content-Length': body.length } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const json = (b: Buffer): any => JSON.parse(b.toString());

async function runIn(socket: string, body: object): Promise<{ id: string; code: number; logs: Buffer }> {
  const created = await socketRequest(socket, 'POST', '/v1.41/containers/create', { Image: 'busybox', ...body });
  expect(created.status).toBe(201);
  const id = json(created.body).Id as string;
  expect((await socketRequest(socket, 'POST', `/v1.41/containers/${id}/start`)).status).toBe(204);
  const code = json((await socketRequest(socket, 'POST', `/v1.41/containers/${id}/wait`)).body).StatusCode as number;
  const logs = (await socketRequest(socket, 'GET', `/v1.41/containers/${id}/logs?stdout=1&stderr=1`)).body;
  return { id, code, logs };
}

const stdout = (logs: Buffer): string => new FrameDecoder().push(logs).filter((f) => f.stream === 1).map((f) => f.payload.toString()).join('');

d('sandbox runtime: images come from the content-addressed store', () => {
  test('offline, busybox and alpine are one busybox-static image with one layer', async () => {
    const { socket } = (await shared)!;
    const images = json((await socketRequest(socket, 'GET', '/v1.41/images/json')).body) as { Id: string; RepoTags: string[] }[];
    const seed = images.find((i) => i.RepoTags.includes('busybox:latest'));
    expect(seed?.RepoTags).toEqual(expect.arrayContaining(['busybox:latest', 'alpine:latest']));
    const inspect = json((await socketRequest(socket, 'GET', '/v1.41/images/busybox/json')).body);
    expect(inspect.RootFS.Layers).toHaveLength(1);
    expect(inspect.Config.Cmd).toEqual(['sh']);
  });
  test('any tag of busybox or alpine that names no image is the offline seed, tagged on first use', async () => {
    const { socket } = (await shared)!;
    const r = await runIn(socket, { Image: 'alpine:3.20', Cmd: ['echo', 'offline'] });
    expect(stdout(r.logs)).toBe('offline\n');
    const seed = json((await socketRequest(socket, 'GET', '/v1.41/images/busybox:latest/json')).body).Id;
    expect(json((await socketRequest(socket, 'GET', '/v1.41/images/alpine:3.20/json')).body).Id).toBe(seed);
  });
  test('rmi of an alias tag never used is 404, not a seed made to be removed', async () => {
    const { socket } = (await shared)!;
    const r = await socketRequest(socket, 'DELETE', '/v1.41/images/alpine:9.99');
    expect(r.status).toBe(404);
  });
  test('an unknown image is 404 at create', async () => {
    const { socket } = (await shared)!;
    const r = await socketRequest(socket, 'POST', '/v1.41/containers/create', { Image: 'nope-dg:1' });
    expect(r.status).toBe(404);
    expect(json(r.body).message).toContain('No such image');
  });
  test('an image in use by a running container cannot be deleted even with force (the store asks the runtime)', async () => {
    const { socket } = (await shared)!;
    const created = json((await socketRequest(socket, 'POST', '/v1.41/containers/create', { Image: 'busybox', Cmd: ['sleep', '30'] })).body);
    await socketRequest(socket, 'POST', `/v1.41/containers/${created.Id}/start`);
    const imageId = json((await socketRequest(socket, 'GET', `/v1.41/containers/${created.Id}/json`)).body).Image as string;
    const r = await socketRequest(socket, 'DELETE', `/v1.41/images/${imageId}?force=1`);
    expect(r.status).toBe(409);
    expect(json(r.body).message).toMatch(/running container/);
    await socketRequest(socket, 'DELETE', `/v1.41/containers/${created.Id}?force=1`);
  });
  test('save, rmi, load, run: the loaded image runs', async () => {
    const { socket } = (await shared)!;
    expect((await socketRequest(socket, 'POST', '/v1.41/images/busybox/tag?repo=dg-roundtrip&tag=1')).status).toBe(201);
    const tar = await raw(socket, 'GET', '/v1.41/images/dg-roundtrip:1/get');
    expect(tar.status).toBe(200);
    expect(json((await socketRequest(socket, 'DELETE', '/v1.41/images/dg-roundtrip:1')).body)).toEqual([{ Untagged: 'dg-roundtrip:1' }]);
    expect((await socketRequest(socket, 'POST', '/v1.41/containers/create', { Image: 'dg-roundtrip:1' })).status).toBe(404);
    const loaded = await raw(socket, 'POST', '/v1.41/images/load?quiet=1', tar.body);
    expect(loaded.body.toString()).toContain('Loaded image: dg-roundtrip:1');
    const r = await runIn(socket, { Image: 'dg-roundtrip:1', Cmd: ['echo', 'loaded'] });
    expect(stdout(r.logs)).toBe('loaded\n');
  });
});

d('sandbox runtime: Tty containers run on a real terminal', () => {
  test('test -t 1 is true, output is raw (not multiplexed), the default size is 24x80', async () => {
    const { socket } = (await shared)!;
    const r = await runIn(socket, { Tty: true, Cmd: ['sh', '-c', 'test -t 1 && echo is-a-tty; stty size'] });
    expect(r.code).toBe(0);
    expect(r.logs.toString()).toBe('is-a-tty\r\n24 80\r\n');
  });
  test('POST /containers/{id}/resize?h=&w= resizes the terminal', async () => {
    const { socket } = (await shared)!;
    const created = json((await socketRequest(socket, 'POST', '/v1.41/containers/create', { Image: 'busybox', Tty: true, Cmd: ['sh', '-c', 'sleep 0.5; stty size'] })).body);
    await socketRequest(socket, 'POST', `/v1.41/containers/${created.Id}/start`);
    expect((await socketRequest(socket, 'POST', `/v1.41/containers/${created.Id}/resize?h=40&w=100`)).status).toBe(200);
    await socketRequest(socket, 'POST', `/v1.41/containers/${created.Id}/wait`);
    expect((await socketRequest(socket, 'GET', `/v1.41/containers/${created.Id}/logs?stdout=1`)).body.toString()).toBe('40 100\r\n');
  });
  test('a resize with a bad size is 400; of a stopped container 409', async () => {
    const { socket } = (await shared)!;
    const r = await runIn(socket, { Tty: true, Cmd: ['true'] });
    expect((await socketRequest(socket, 'POST', `/v1.41/containers/${r.id}/resize?h=x&w=1`)).status).toBe(400);
    expect((await socketRequest(socket, 'POST', `/v1.41/containers/${r.id}/resize?h=10&w=10`)).status).toBe(409);
  });
});

d('sandbox runtime: containers and their logs survive a restart', () => {
  test('an exited container is listed with its exit code and logs after the runtime is reopened; a running one exits 137 at close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-restart-'));
    const first = await engine(dir);
    const exited = await runIn(first.socket, { Cmd: ['sh', '-c', 'echo before-restart; exit 3'], name: undefined });
    const running = json((await socketRequest(first.socket, 'POST', '/v1.41/containers/create?name=dg-kept-running', { Image: 'busybox', Cmd: ['sleep', '60'] })).body).Id as string;
    await socketRequest(first.socket, 'POST', `/v1.41/containers/${running}/start`);
    await first.close();
    const second = await engine(dir);
    const list = json((await socketRequest(second.socket, 'GET', '/v1.41/containers/json?all=1')).body) as { Id: string; Status: string; State: string }[];
    expect(list.find((c) => c.Id === exited.id)?.Status).toMatch(/^Exited \(3\)/);
    expect(list.find((c) => c.Id === running)?.Status).toMatch(/^Exited \(137\)/);
    const logs = (await socketRequest(second.socket, 'GET', `/v1.41/containers/${exited.id}/logs?stdout=1`)).body;
    expect(stdout(logs)).toBe('before-restart\n');
    // And it starts again on its kept root filesystem.
    expect((await socketRequest(second.socket, 'POST', `/v1.41/containers/${exited.id}/start`)).status).toBe(204);
    expect(json((await socketRequest(second.socket, 'POST', `/v1.41/containers/${exited.id}/wait`)).body).StatusCode).toBe(3);
  });
  test('a container whose server died while it ran comes back exited with 255, as dockerd reports it without live-restore', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-crash-'));
    const first = await engine(dir);
    const id = json((await socketRequest(first.socket, 'POST', '/v1.41/containers/create', { Image: 'busybox', Cmd: ['sleep', '60'] })).body).Id as string;
    await socketRequest(first.socket, 'POST', `/v1.41/containers/${id}/start`);
    await new Promise((r) => setTimeout(r, 200));
    // A second server on the same state, the first never closed: what a restart after a crash reads.
    const second = await engine(dir);
    const state = json((await socketRequest(second.socket, 'GET', `/v1.41/containers/${id}/json`)).body).State;
    expect(state).toMatchObject({ Status: 'exited', Running: false, ExitCode: 255 });
    await socketRequest(first.socket, 'DELETE', `/v1.41/containers/${id}?force=1`);
  });
});
