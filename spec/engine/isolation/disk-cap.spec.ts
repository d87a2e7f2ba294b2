import { expect, test } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import type { SandboxRuntimeOptions } from '../../../lib/engine/runtime/sandbox/index.js';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox, type Answer } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const MiB = 1024 * 1024;
/** A tiny cap, checked every 200 ms: 64 MiB written is far over it. */
const { call, start } = tenantSandbox('dockgate-disk-cap', { runtime: { maxOwnerDiskBytes: 8 * MiB, diskCheckIntervalMs: 200 } as SandboxRuntimeOptions });

/** Inspect of the container once it no longer runs, or the last inspect after `ms`. */
async function stopped(user: string, id: string, ms: number): Promise<Answer> {
  const until = Date.now() + ms;
  for (;;) {
    const inspected = await call(user, 'GET', `/containers/${id}/json`);
    if (inspected.json?.State?.Running !== true || Date.now() > until) return inspected;
    await delay(100);
  }
}

/** The next create, start and volume create of `user` as answers. */
async function growth(user: string, stoppedId: string) {
  const created = await call(user, 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] });
  const started = await call(user, 'POST', `/containers/${stoppedId}/start`);
  const volume = await call(user, 'POST', '/volumes/create', { Name: `${user}-more` });
  return { created, started, volume };
}

d('a tenant\'s containers and volumes are capped in bytes per owner, checked as they grow (sandbox maxOwnerDiskBytes)', () => {
  test('a tenant container writing 64 MiB to its root is killed within seconds, State.Error naming the cap; the tenant\'s next create, start and volume create are 403 naming it', async () => {
    const id = await start('bob', { Cmd: ['sh', '-c', 'dd if=/dev/zero of=/big bs=1M count=64 2>/dev/null; sleep 600'] });
    const inspected = await stopped('bob', id, 15_000);
    expect(inspected.json.State.Running).toBe(false);
    expect(inspected.json.State.Error).toContain('maxOwnerDiskBytes');
    const { created, started, volume } = await growth('bob', id);
    for (const answer of [created, started, volume]) {
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
});
