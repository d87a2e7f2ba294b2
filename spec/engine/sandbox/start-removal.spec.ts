import { expect, test } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { contextOf, tenantSandbox } from '../isolation/support.js';

const engine = tenantSandbox('dockgate-rmstart');
/** Files in the image's /data: the volume's first fill copies each, so the start's copy-up takes a while. */
const FILES = 6000;
/** The container's command, unique on this host: what must not be left running. */
const SLEEP = 'sleep 3917';

const running = (): string => spawnSync('pgrep', ['-f', SLEEP], { encoding: 'utf8' }).stdout.trim();
const entries = (dir: string): number => {
  try {
    return readdirSync(dir).length;
  } catch {
    return 0;
  }
};

/** Builds the image once; creates a container on a fresh volume at its /data and starts it; answers once the copy-up is half-way. */
let image: Promise<void> | undefined;
async function startCopying(volume: string): Promise<{ id: string; starting: Promise<{ status: number }> }> {
  image ??= (async () => {
    const dockerfile = `FROM busybox\nRUN mkdir /data && cd /data && i=0; while [ $i -lt ${FILES} ]; do : > f$i; i=$((i+1)); done\n`;
    const built = await engine.call('alice', 'POST', '/build?t=rmstart-many:1', await contextOf(dockerfile));
    expect(built.status).toBe(200);
  })();
  await image;
  expect((await engine.call('alice', 'POST', '/volumes/create', { Name: volume })).status).toBe(201);
  const mountpoint = (await engine.call('alice', 'GET', `/volumes/${volume}`)).json.Mountpoint as string;
  const created = await engine.call('alice', 'POST', '/containers/create', { Image: 'rmstart-many:1', Cmd: ['sh', '-c', SLEEP], HostConfig: { Binds: [`${volume}:/data`] } });
  expect(created.status).toBe(201);
  const id = created.json.Id as string;
  const starting = engine.call('alice', 'POST', `/containers/${id}/start`);
  // The caller's request is sent once the copy-up has begun and before it has ended.
  const deadline = Date.now() + 60_000;
  while (entries(mountpoint) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  const copied = entries(mountpoint);
  expect(copied).toBeGreaterThan(0);
  expect(copied).toBeLessThan(FILES);
  return { id, starting };
}

describeWithPeers('rm -f, stop and kill during the copy-up part of a start wait for that start', [bwrap], () => {
  test('rm -f while a volume is filled from the image answers after the start, and no process of the container is left', async () => {
    const { id, starting } = await startCopying('rmstart1');
    // Before, the removal found no process, answered at once, and the start went on to run `sleep` for a removed container.
    expect((await engine.call('alice', 'DELETE', `/containers/${id}?force=1`)).status).toBe(204);
    expect((await starting).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(running()).toBe('');
    expect((await engine.call('alice', 'GET', `/containers/${id}/json`)).status).toBe(404);
  }, 180_000);

  test('stop while a volume is filled from the image stops the container the start brings up (204, not "already stopped")', async () => {
    const { id, starting } = await startCopying('rmstart2');
    expect((await engine.call('alice', 'POST', `/containers/${id}/stop?t=0`)).status).toBe(204);
    expect((await starting).status).toBe(204);
    expect(running()).toBe('');
    expect((await engine.call('alice', 'GET', `/containers/${id}/json`)).json.State.Running).toBe(false);
    expect((await engine.call('alice', 'DELETE', `/containers/${id}?force=1`)).status).toBe(204);
  }, 180_000);
});
