import { expect, test, afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FrameDecoder } from '../../../lib/engine/index.js';
import type { ContainerRuntime } from '../../../lib/engine-api/runtime-types.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { mountsUnder } from '../../../lib/engine/runtime/sandbox/overlay-rootfs.js';
import { listenOnSocket, socketRequest } from '../helpers.js';
import { bwrap, hasBwrap } from '../sandbox-socket.js';
import { describeWithPeers } from '../../support/peers.js';

const root = process.getuid?.() === 0;
const overlayPeer = { name: 'a root server (kernel overlayfs)', available: () => root };

/** One runtime on `stateDir` behind a socket; `close` closes both. */
async function serve(stateDir: string) {
  const runtime = sandboxRuntime({ stateDir }) as ContainerRuntime & { close?: () => Promise<void> };
  const listening = await listenOnSocket(runtime, '1.24-1.41');
  const call = async (method: string, path: string, body?: object): Promise<{ status: number; json: any; body: Buffer }> => {
    const res = await socketRequest(listening.socket, method, `/v1.41${path}`, body);
    let json: unknown;
    try {
      json = res.body.length > 0 ? JSON.parse(res.body.toString()) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, json, body: res.body };
  };
  const create = async (cmd: string): Promise<string> => {
    const created = await call('POST', '/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', cmd], HostConfig: { NetworkMode: 'none' } });
    expect(created.status).toBe(201);
    return created.json.Id as string;
  };
  const run = async (cmd: string): Promise<{ id: string; out: string }> => {
    const id = await create(cmd);
    expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
    await call('POST', `/containers/${id}/wait`);
    const logs = await call('GET', `/containers/${id}/logs?stdout=1&stderr=1`);
    return { id, out: new FrameDecoder().push(logs.body).map((f) => f.payload.toString()).join('') };
  };
  const close = async (): Promise<void> => {
    await runtime.close?.();
    await listening.close();
  };
  return { call, create, run, close };
}

const overlaysOf = (stateDir: string): string => join(stateDir, 'overlays');
/** Bytes of the regular files under `dir` (not following links). */
function bytesUnder(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const s = lstatSync(join(dir, name));
    if (s.isDirectory()) total += bytesUnder(join(dir, name));
    else if (s.isFile()) total += s.size;
  }
  return total;
}

describeWithPeers('a container\'s root is an overlay of its image\'s tree: it writes only its own upper layer, and no copy of the image is made', [bwrap, overlayPeer], () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-overlay-'));
  const served = hasBwrap && root ? serve(stateDir) : undefined;
  afterAll(async () => {
    await (await served)?.close();
    // Nothing is mounted there once the runtime closed.
    if (mountsUnder(stateDir).length === 0) rmSync(stateDir, { recursive: true, force: true });
  });
  test('the first container writes /written and removes /bin/cat; the next ones see the image as it is', async () => {
    const { run } = (await served)!;
    expect((await run('echo x > /written; rm /bin/cat; echo done')).out).toBe('done\n');
    for (let i = 0; i < 2; i++) expect((await run('test -e /written && echo leaked; test -e /bin/cat && echo intact')).out).toBe('intact\n');
  });
  test('a running container\'s root is an overlay mounted under stateDir/overlays, and its upper layer holds only what it wrote', async () => {
    const { create, call } = (await served)!;
    const id = await create('echo hello > /tmp/note; sleep 30');
    expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
    const upper = join(overlaysOf(stateDir), id, 'upper');
    for (let i = 0; i < 100 && !existsSync(join(upper, 'tmp', 'note')); i++) await new Promise((r) => setTimeout(r, 50));
    expect(mountsUnder(overlaysOf(stateDir))).toContain(join(overlaysOf(stateDir), id, 'merged'));
    const mount = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => l.split(' ')[4] === join(overlaysOf(stateDir), id, 'merged'));
    expect(mount).toMatch(/ - overlay overlay /);
    expect(readFileSync(join(upper, 'tmp', 'note'), 'utf8')).toBe('hello\n');
    // busybox alone is over a megabyte: what the container took is its note and the mount points bwrap made.
    expect(bytesUnder(upper)).toBeLessThan(4096);
    expect(existsSync(join(stateDir, 'containers', id, 'rootfs'))).toBe(false);
    expect((await call('DELETE', `/containers/${id}?force=1`)).status).toBe(204);
  });
});

describeWithPeers('docker diff of an overlay root is read from its upper layer: whiteouts and opaque directories are deletions', [bwrap, overlayPeer], () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-overlay-diff-'));
  const served = hasBwrap && root ? serve(stateDir) : undefined;
  afterAll(async () => {
    await (await served)?.close();
    // Nothing is mounted there once the runtime closed.
    if (mountsUnder(stateDir).length === 0) rmSync(stateDir, { recursive: true, force: true });
  });
  test('an added file, a changed one, a removed one (a whiteout) and a directory removed and made again (opaque: its image entries deleted)', async () => {
    const { run, call } = (await served)!;
    const { id } = await run('echo new > /added; echo more >> /etc/passwd; rm /etc/group; rm -rf /home; mkdir /home; echo x > /home/fresh; echo done');
    const upper = join(overlaysOf(stateDir), id, 'upper');
    const whiteout = lstatSync(join(upper, 'etc', 'group'));
    expect(whiteout.isCharacterDevice() && whiteout.rdev === 0).toBe(true);
    const changes = (await call('GET', `/containers/${id}/changes`)).json as { Path: string; Kind: number }[];
    const kinds = Object.fromEntries(changes.map((c) => [c.Path, c.Kind]));
    expect(kinds['/added']).toBe(1);
    expect(kinds['/etc/passwd']).toBe(0);
    expect(kinds['/etc/group']).toBe(2);
    expect(kinds['/home/fresh']).toBe(1);
    // The image's /home/* entries (busybox's /home/user, when it has one) are hidden by the opaque directory.
    const imageHome = spawnSync('sh', ['-c', `ls -A ${join(stateDir, 'images')}/rootfs-*/*/home 2>/dev/null | head -1`]).stdout.toString().trim();
    if (imageHome !== '') expect(kinds[`/home/${imageHome}`]).toBe(2);
    expect(kinds['/bin/busybox']).toBeUndefined();
  });
  test('docker export of an overlay root is the merged view: what the container removed is not in it', async () => {
    const { run, call } = (await served)!;
    const { id } = await run('rm /bin/cat; echo kept > /kept');
    const exported = await call('GET', `/containers/${id}/export`);
    expect(exported.status).toBe(200);
    const names = spawnSync('tar', ['-t'], { input: exported.body }).stdout.toString().split('\n');
    expect(names).toContain('kept');
    expect(names).not.toContain('bin/cat');
    expect(names).toContain('bin/busybox');
  });
});

describeWithPeers('overlays are unmounted when their container is removed, when the runtime closes, and a next server detaches what an earlier one left mounted', [bwrap, overlayPeer], () => {
  test('removal unmounts and deletes the upper layer; close unmounts every overlay and keeps the writes; a new server mounts them again on demand', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-overlay-mounts-'));
    const first = await serve(stateDir);
    const removed = (await first.run('echo x > /x')).id;
    const kept = (await first.run('echo y > /y')).id;
    expect(mountsUnder(overlaysOf(stateDir))).toHaveLength(2);
    expect((await first.call('DELETE', `/containers/${removed}`)).status).toBe(204);
    for (let i = 0; i < 100 && existsSync(join(overlaysOf(stateDir), removed)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(join(overlaysOf(stateDir), removed))).toBe(false);
    expect(mountsUnder(overlaysOf(stateDir))).toEqual([join(overlaysOf(stateDir), kept, 'merged')]);
    await first.close();
    expect(mountsUnder(overlaysOf(stateDir))).toEqual([]);
    const second = await serve(stateDir);
    const changes = (await second.call('GET', `/containers/${kept}/changes`)).json as { Path: string; Kind: number }[];
    expect(changes).toContainEqual({ Path: '/y', Kind: 1 });
    expect(mountsUnder(overlaysOf(stateDir))).toEqual([join(overlaysOf(stateDir), kept, 'merged')]);
    // This server ends without closing: the next one detaches its mount before anything else.
    const third = await serve(stateDir);
    expect((await third.call('POST', `/containers/${kept}/start`)).status).toBe(204);
    await third.call('POST', `/containers/${kept}/wait`);
    expect(mountsUnder(overlaysOf(stateDir))).toEqual([join(overlaysOf(stateDir), kept, 'merged')]);
    expect((await third.call('DELETE', `/containers/${kept}`)).status).toBe(204);
    for (let i = 0; i < 100 && mountsUnder(overlaysOf(stateDir)).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(mountsUnder(overlaysOf(stateDir))).toEqual([]);
    await second.close();
    await third.close();
    expect(mountsUnder(stateDir)).toEqual([]);
    rmSync(stateDir, { recursive: true, force: true });
  });
});

describeWithPeers('an image removed with force past a stopped container keeps the tree that container\'s overlay runs on', [bwrap, overlayPeer], () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-overlay-rmi-'));
  const served = hasBwrap && root ? serve(stateDir) : undefined;
  afterAll(async () => {
    await (await served)?.close();
    // Nothing is mounted there once the runtime closed.
    if (mountsUnder(stateDir).length === 0) rmSync(stateDir, { recursive: true, force: true });
  });
  test('docker rmi -f of its image, then docker start: the container still sees the image\'s files and its own', async () => {
    const { run, call } = (await served)!;
    const base = await run('echo image > /marker');
    const committed = await call('POST', `/commit?container=${base.id}&repo=dg-overlay-rmi&tag=1`);
    expect(committed.status).toBe(201);
    const created = await call('POST', '/containers/create', { Image: 'dg-overlay-rmi:1', Cmd: ['sh', '-c', 'echo own >> /own; cat /marker /own'], HostConfig: { NetworkMode: 'none' } });
    const id = created.json.Id as string;
    expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
    await call('POST', `/containers/${id}/wait`);
    expect((await call('DELETE', `/images/${committed.json.Id as string}?force=1`)).status).toBe(200);
    expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
    expect((await call('POST', `/containers/${id}/wait`)).json.StatusCode).toBe(0);
    const logs = await call('GET', `/containers/${id}/logs?stdout=1&stderr=1`);
    expect(new FrameDecoder().push(logs.body).map((f) => f.payload.toString()).join('')).toBe('image\nown\nimage\nown\nown\n');
  });
});
