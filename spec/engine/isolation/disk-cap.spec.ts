import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allocatedBytes, BlockCount } from '../../../lib/engine/linux/allocated-bytes.js';
import { setTimeout as delay } from 'node:timers/promises';
import { sandboxRuntime, type SandboxRuntimeOptions } from '../../../lib/engine/runtime/sandbox/index.js';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox, type Answer } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const MiB = 1024 * 1024;
/** A tiny cap, checked every 200 ms: 64 MiB written is far over it. */
const { call, start } = tenantSandbox('dockgate-disk-cap', { runtime: { maxOwnerDiskBytes: 8 * MiB, diskCheckIntervalMs: 200 } satisfies SandboxRuntimeOptions });

/** A tar holding only a Dockerfile (a build context, or something to copy into a container). */
const dockerfileTar = (): Buffer => spawnSync('sh', ['-c', 'd=$(mktemp -d) && printf "FROM busybox\\nRUN true\\n" > $d/Dockerfile && tar -C $d -c Dockerfile && rm -r $d']).stdout;

/** Inspect of the container once it no longer runs, or the last inspect after `ms`. */
async function stopped(user: string, id: string, ms: number): Promise<Answer> {
  const until = Date.now() + ms;
  for (;;) {
    const inspected = await call(user, 'GET', `/containers/${id}/json`);
    if (inspected.json?.State?.Running !== true || Date.now() > until) return inspected;
    await delay(100);
  }
}

/** The next create, start, volume create, cp into a container, commit and build of `user`, as answers. */
async function growth(user: string, stoppedId: string) {
  const created = await call(user, 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] });
  const started = await call(user, 'POST', `/containers/${stoppedId}/start`);
  const volume = await call(user, 'POST', '/volumes/create', { Name: `${user}-more` });
  const copied = await call(user, 'PUT', `/containers/${stoppedId}/archive?path=/`, dockerfileTar());
  const committed = await call(user, 'POST', `/commit?container=${stoppedId}`);
  const built = await call(user, 'POST', '/build', dockerfileTar());
  return { created, started, volume, copied, committed, built };
}

d('a tenant\'s containers and volumes are capped in bytes per owner, checked as they grow (sandbox maxOwnerDiskBytes)', () => {
  test('a tenant container writing 64 MiB to its root is killed within seconds, State.Error naming the cap; the tenant\'s next create, start, volume create, cp, commit and build are 403 naming it', async () => {
    const id = await start('bob', { Cmd: ['sh', '-c', 'dd if=/dev/zero of=/big bs=1M count=64 2>/dev/null; sleep 600'] });
    const inspected = await stopped('bob', id, 15_000);
    expect(inspected.json.State.Running).toBe(false);
    expect(inspected.json.State.Error).toContain('maxOwnerDiskBytes');
    const { created, started, volume, copied, committed, built } = await growth('bob', id);
    for (const answer of [created, started, volume, copied, committed, built]) {
      expect(answer.status).toBe(403);
      expect(answer.json.message).toContain('maxOwnerDiskBytes');
    }
  });

  test('writing to the tenant\'s own volume counts too', async () => {
    expect((await call('dave', 'POST', '/volumes/create', { Name: 'dave-data' })).status).toBe(201);
    const id = await start('dave', { Cmd: ['sh', '-c', 'dd if=/dev/zero of=/data/big bs=1M count=64 2>/dev/null; sleep 600'], HostConfig: { Binds: ['dave-data:/data'] } });
    const inspected = await stopped('dave', id, 15_000);
    expect(inspected.json.State.Running).toBe(false);
    expect(inspected.json.State.Error).toContain('maxOwnerDiskBytes');
    expect((await call('dave', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] })).status).toBe(403);
  });

  test('another tenant is unaffected: its running container keeps running and it creates, starts and makes volumes', async () => {
    const id = await start('carol', { Cmd: ['sleep', '600'] });
    const writer = await start('erin', { Cmd: ['sh', '-c', 'dd if=/dev/zero of=/big bs=1M count=64 2>/dev/null; sleep 600'] });
    expect((await stopped('erin', writer, 15_000)).json.State.Running).toBe(false);
    expect((await call('carol', 'GET', `/containers/${id}/json`)).json.State.Running).toBe(true);
    const second = await start('carol', { Cmd: ['true'] });
    expect(second).toMatch(/^[0-9a-f]{64}$/);
    expect((await call('carol', 'POST', '/volumes/create', { Name: 'carol-data' })).status).toBe(201);
    await call('carol', 'DELETE', `/containers/${id}?force=1`);
  });

  test('once the tenant removes what filled its share, it may create again', async () => {
    const id = await start('frank', { Cmd: ['sh', '-c', 'dd if=/dev/zero of=/big bs=1M count=64 2>/dev/null; sleep 600'] });
    expect((await stopped('frank', id, 15_000)).json.State.Running).toBe(false);
    expect((await call('frank', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] })).status).toBe(403);
    expect((await call('frank', 'DELETE', `/containers/${id}`)).status).toBe(204);
    expect((await call('frank', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] })).status).toBe(201);
  });

  test.each(['maxOwnerDiskBytes', 'diskCheckIntervalMs'])('option %s must be a positive integer', (option) => {
    expect(() => sandboxRuntime({ [option]: 0 })).toThrow(`sandboxRuntime option "${option}" must be a positive integer`);
    expect(() => sandboxRuntime({ [option]: '20g' as unknown as number })).toThrow(`sandboxRuntime option "${option}" must be a positive integer`);
  });
  test('option diskCheckIntervalMs beyond what a timer holds is refused', () => {
    expect(() => sandboxRuntime({ diskCheckIntervalMs: 2 ** 31 })).toThrow('diskCheckIntervalMs');
  });
});

describe('the disk measure follows no link and counts each inode once, by its allocated blocks', () => {
  test('a link to a large host tree counts nothing of it; a hard link counts once; a sparse file only what it holds', async () => {
    const host = mkdtempSync(join(tmpdir(), 'dockgate-disk-host-'));
    writeFileSync(join(host, 'big'), Buffer.alloc(4 * MiB, 1));
    const tree = mkdtempSync(join(tmpdir(), 'dockgate-disk-tree-'));
    mkdirSync(join(tree, 'd'));
    writeFileSync(join(tree, 'd', 'one'), Buffer.alloc(MiB, 1));
    linkSync(join(tree, 'd', 'one'), join(tree, 'again'));
    symlinkSync(host, join(tree, 'host'));
    symlinkSync(join(host, 'big'), join(tree, 'd', 'big'));
    writeFileSync(join(tree, 'sparse'), '');
    truncateSync(join(tree, 'sparse'), 64 * MiB);
    const bytes = await allocatedBytes(tree, new BlockCount(1000, 16));
    expect(bytes).toBeGreaterThanOrEqual(MiB);
    expect(bytes).toBeLessThan(MiB + 256 * 1024);
  });
  test('more entries, or deeper directories, than the count allows is an error, not a partial answer', async () => {
    const tree = mkdtempSync(join(tmpdir(), 'dockgate-disk-deep-'));
    mkdirSync(join(tree, 'a/b/c/d/e'), { recursive: true });
    await expect(allocatedBytes(tree, new BlockCount(1000, 3))).rejects.toThrow('levels deep');
    await expect(allocatedBytes(tree, new BlockCount(3, 16))).rejects.toThrow('more than 3 files');
    expect(await allocatedBytes(join(tree, 'missing'), new BlockCount(3, 16))).toBe(0);
  });
});
