import { describe, test, expect, afterAll } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { RootfsSpares } from '../../../lib/engine/runtime/sandbox/rootfs-spares.js';
import { listenOnSocket, socketRequest } from '../helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'dockgate-spares-'));
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

/** A fake copy: a directory holding which image it is of and the how-manieth copy. */
function counting(): { make: (imageId: string, dest: string) => Promise<void>; made: string[] } {
  const made: string[] = [];
  return {
    made,
    make: async (imageId, dest) => {
      made.push(imageId);
      mkdirSync(dest);
      writeFileSync(join(dest, 'copy'), `${imageId} ${made.length}`);
    },
  };
}

describe('a start takes a spare root filesystem copy made in the background, one per recently started image', () => {
  test('the first start of an image copies; the next takes the spare made meanwhile (one rename), and a new spare follows', async () => {
    const dir = join(tmp(), 'spares');
    const { make, made } = counting();
    const spares = new RootfsSpares(dir, make);
    const root = tmp();
    await spares.take('sha256:aa', join(root, 'one'));
    expect(readFileSync(join(root, 'one', 'copy'), 'utf8')).toBe('sha256:aa 1');
    await spares.idle();
    expect(readdirSync(dir)).toHaveLength(1);
    await spares.take('sha256:aa', join(root, 'two'));
    // The spare (copy 2), made before this start asked for it.
    expect(readFileSync(join(root, 'two', 'copy'), 'utf8')).toBe('sha256:aa 2');
    await spares.idle();
    expect(made).toEqual(['sha256:aa', 'sha256:aa', 'sha256:aa']);
    await spares.close();
    expect(readdirSync(dir)).toEqual([]);
  });
  test('two starts at once: one takes the spare, the other gets a copy of its own', async () => {
    const dir = join(tmp(), 'spares');
    const { make } = counting();
    const spares = new RootfsSpares(dir, make);
    const root = tmp();
    await spares.take('sha256:bb', join(root, 'first'));
    await spares.idle();
    await Promise.all([spares.take('sha256:bb', join(root, 'a')), spares.take('sha256:bb', join(root, 'b'))]);
    const copies = ['a', 'b'].map((n) => readFileSync(join(root, n, 'copy'), 'utf8'));
    expect(new Set(copies).size).toBe(2);
    await spares.close();
  });
  test('at most 4 images keep a spare: the least recently started loses its own', async () => {
    const dir = join(tmp(), 'spares');
    const spares = new RootfsSpares(dir, counting().make);
    const root = tmp();
    for (const image of ['1', '2', '3', '4', '5']) await spares.take(`sha256:${image}`, join(root, image));
    await spares.idle();
    expect(readdirSync(dir)).toHaveLength(4);
    expect(readdirSync(dir).some((name) => name.startsWith('1-'))).toBe(false);
    await spares.close();
  });
  test('what an earlier server left in the directory is removed at construction', async () => {
    const dir = join(tmp(), 'spares');
    mkdirSync(join(dir, 'half-made'), { recursive: true });
    const spares = new RootfsSpares(dir, counting().make);
    await spares.idle();
    expect(readdirSync(dir)).toEqual([]);
    await spares.close();
  });
});

const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };

describeWithPeers('a container started from a spare sees its image as it is, never another container\'s writes', [bwrap], () => {
  const runtime = hasBwrap ? sandboxRuntime() : undefined;
  const listening = runtime ? listenOnSocket(runtime, { min: '1.12', max: '1.41' }) : undefined;
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });
  const runOnce = async (cmd: string): Promise<string> => {
    const { socket } = (await listening)!;
    const created = await socketRequest(socket, 'POST', '/v1.41/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', cmd], HostConfig: { NetworkMode: 'none' } });
    const id = JSON.parse(created.body.toString()).Id as string;
    expect((await socketRequest(socket, 'POST', `/v1.41/containers/${id}/start`)).status).toBe(204);
    await socketRequest(socket, 'POST', `/v1.41/containers/${id}/wait`);
    const logs = await socketRequest(socket, 'GET', `/v1.41/containers/${id}/logs?stdout=1&stderr=1`);
    await socketRequest(socket, 'DELETE', `/v1.41/containers/${id}?force=1`);
    return new FrameDecoder().push(logs.body).map((f) => f.payload.toString()).join('');
  };
  test('the first writes /written and removes /bin/cat; the next ones (from spares) have the image\'s files', async () => {
    expect(await runOnce('echo x > /written; rm /bin/cat; echo done')).toBe('done\n');
    for (let i = 0; i < 2; i++) {
      await settle();
      expect(await runOnce('test -e /written && echo leaked; test -e /bin/cat && echo intact')).toBe('intact\n');
    }
  });
});
