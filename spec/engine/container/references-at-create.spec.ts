import { test, expect, afterAll } from '@jest/globals';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

/**
 * Issue 32's rule: a create's references to other containers are resolved to ids once, at
 * create; a later start uses those ids, so renaming the container named, and giving its old name
 * to another, changes nothing of what the first container joins. No policy here: the runtime's
 * own resolution is under test (the policy's pinning is isolation/container-reference.spec.ts).
 */
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-refs-spec-'));
const runtime = hasBwrap ? sandboxRuntime({ stateDir, maxLogBytes: 64 * 1024 }) : undefined;
const listening = runtime ? listenOnSocket(runtime) : undefined;

afterAll(async () => {
  await runtime?.close?.();
  await (await listening)?.close();
});

async function call(method: string, path: string, body?: object): Promise<{ status: number; json: any }> {
  const { socket } = (await listening)!;
  const res = await socketRequest(socket, method, `/v1.28${path}`, body);
  const text = res.body.toString();
  return { status: res.status, json: text === '' ? undefined : JSON.parse(text) };
}

async function created(body: object, name?: string): Promise<string> {
  const r = await call('POST', `/containers/create${name ? `?name=${name}` : ''}`, { Image: 'busybox', ...body });
  expect({ status: r.status, body: r.json }).toEqual({ status: 201, body: expect.objectContaining({ Id: expect.any(String) }) });
  return r.json.Id as string;
}

async function started(body: object, name?: string): Promise<string> {
  const id = await created(body, name);
  expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
  return id;
}

/** Starts a created container, waits for its end and gives its exit code and output. */
async function runToEnd(id: string): Promise<{ code: number; out: string }> {
  const { socket } = (await listening)!;
  expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
  const code = (await call('POST', `/containers/${id}/wait`)).json.StatusCode as number;
  const logs = await socketRequest(socket, 'GET', `/v1.28/containers/${id}/logs?stdout=1&stderr=1`);
  return { code, out: new FrameDecoder().push(logs.body).map((f) => f.payload.toString()).join('') };
}

const serving = (word: string): object => ({ Cmd: ['sh', '-c', `while true; do echo ${word} | nc -l -p 8080; done`] });

describeWithPeers('a container reference is resolved to an id at create: a rename, and another container taking the name, change nothing', [bwrap], () => {
  test('--network container:a, a renamed, another a made: the first container, started, joins the original a', async () => {
    const original = await started(serving('original'), 'refs-a');
    const joiner = await created({ Cmd: ['sh', '-c', 'sleep 1; nc -w 2 127.0.0.1 8080'], HostConfig: { NetworkMode: 'container:refs-a' } });
    expect((await call('GET', `/containers/${joiner}/json`)).json.HostConfig.NetworkMode).toBe(`container:${original}`);
    expect((await call('POST', `/containers/refs-a/rename?name=refs-a-old`)).status).toBe(204);
    const impostor = await started(serving('impostor'), 'refs-a');
    const { out } = await runToEnd(joiner);
    expect(out).toBe('original\n');
    for (const id of [joiner, impostor, original]) await call('DELETE', `/containers/${id}?force=1`);
  });

  test('--volumes-from a, a renamed, another a made: the first container, started, mounts the original a\'s volume', async () => {
    const original = await created({ Cmd: ['sh', '-c', 'echo original > /data/f'], Volumes: { '/data': {} } }, 'refs-v');
    expect((await runToEnd(original)).code).toBe(0);
    const reader = await created({ Cmd: ['cat', '/data/f'], HostConfig: { VolumesFrom: ['refs-v'] } });
    expect((await call('POST', `/containers/refs-v/rename?name=refs-v-old`)).status).toBe(204);
    const impostor = await created({ Cmd: ['sh', '-c', 'echo impostor > /data/f'], Volumes: { '/data': {} } }, 'refs-v');
    expect((await runToEnd(impostor)).code).toBe(0);
    expect(await runToEnd(reader)).toEqual({ code: 0, out: 'original\n' });
    for (const id of [reader, impostor, original]) await call('DELETE', `/containers/${id}?force=1&v=1`);
  });
});
