import { expect, test } from '@jest/globals';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { tenantSandbox, type Answer } from './support.js';

const MAP_SIZE = 65536;
const engine = tenantSandbox('dockgate-iso-ranges');
/** A server whose range holds two container ranges: the one of containers without an owner, and one owner's. */
const narrow = tenantSandbox('dockgate-iso-ranges-narrow', { runtime: { userns: { uid: 100000, gid: 100000, size: 2 * MAP_SIZE } } });

/** `0 BASE SIZE` of a /proc/self/uid_map line: the host uid of container root and how many ids follow. */
function hostBase(uidMap: string): { base: number; size: number } {
  const [inside, base, size] = uidMap.trim().split(/\s+/).map(Number);
  expect(inside).toBe(0);
  return { base: base!, size: size! };
}

/** A tenant's container: makes /mine (mode 0600, as its root) and /vol/mine on its volume, prints its uid_map; then an exec prints it again. */
async function tenantRun(user: string): Promise<{ id: string; uidMap: string; execMap: string; file: number; volumeFile: number }> {
  const volume = `${user}-ranges`;
  expect((await engine.call(user, 'POST', '/volumes/create', { Name: volume })).status).toBe(201);
  const id = await engine.start(user, {
    Cmd: ['sh', '-c', 'umask 077 && echo secret > /mine && echo v > /vol/mine && cat /proc/self/uid_map && sleep 60'],
    HostConfig: { Binds: [`${volume}:/vol`] },
  });
  let uidMap = '';
  for (let i = 0; i < 100 && uidMap === ''; i++) {
    const logs = await engine.call(user, 'GET', `/containers/${id}/logs?stdout=1&stderr=1`);
    uidMap = new FrameDecoder().push(logs.body).map((f) => f.payload.toString()).join('');
    if (uidMap === '') await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const exec = await engine.call(user, 'POST', `/containers/${id}/exec`, { Cmd: ['cat', '/proc/self/uid_map'], AttachStdout: true, AttachStderr: true });
  expect(exec.status).toBe(201);
  const ran: Answer = await engine.call(user, 'POST', `/exec/${exec.json.Id}/start`, { Detach: false, Tty: false });
  const execMap = new FrameDecoder().push(ran.body).map((f) => f.payload.toString()).join('');
  const file = statSync(join(engine.stateDir, 'overlays', id, 'merged', 'mine')).uid;
  const volumeFile = statSync(join(engine.stateDir, 'volumes', volume, '_data', 'mine')).uid;
  return { id, uidMap, execMap, file, volumeFile };
}

describeWithPeers('each owner\'s containers run on a subordinate id range of its own: one tenant\'s files are foreign to another\'s containers', [bwrap], () => {
  test('bob\'s and carol\'s container root are different host uids: a file each makes (rootfs and volume) belongs to its own range, outside the other\'s map', async () => {
    const bob = await tenantRun('bob');
    const carol = await tenantRun('carol');
    try {
      const bobMap = hostBase(bob.uidMap);
      const carolMap = hostBase(carol.uidMap);
      // The exec enters the container's own range, as its processes do.
      expect(hostBase(bob.execMap)).toEqual(bobMap);
      expect(hostBase(carol.execMap)).toEqual(carolMap);
      expect(bobMap.size).toBe(MAP_SIZE);
      expect(carolMap.base).not.toBe(bobMap.base);
      // Ranges never overlap: neither owner's host ids are mapped in the other's containers.
      expect(Math.abs(carolMap.base - bobMap.base)).toBeGreaterThanOrEqual(MAP_SIZE);
      expect({ file: bob.file, volume: bob.volumeFile }).toEqual({ file: bobMap.base, volume: bobMap.base });
      expect({ file: carol.file, volume: carol.volumeFile }).toEqual({ file: carolMap.base, volume: carolMap.base });
      const inCarol = (uid: number) => uid >= carolMap.base && uid < carolMap.base + carolMap.size;
      expect([bob.file, bob.volumeFile].filter(inCarol)).toEqual([]);
    } finally {
      await engine.call('bob', 'DELETE', `/containers/${bob.id}?force=1`);
      await engine.call('carol', 'DELETE', `/containers/${carol.id}?force=1`);
    }
  }, 120_000);

  test('an owner keeps its range: bob\'s second container runs on the same host ids as his first', async () => {
    const first = await engine.run('bob', { Cmd: ['cat', '/proc/self/uid_map'] });
    const second = await engine.run('bob', { Cmd: ['cat', '/proc/self/uid_map'] });
    expect(hostBase(second.out)).toEqual(hostBase(first.out));
  }, 60_000);

  test('an owner beyond what the server\'s range holds is refused at create (409 naming userns.size and /etc/subuid), never put on another\'s range', async () => {
    const bob = await narrow.run('bob', { Cmd: ['cat', '/proc/self/uid_map'] });
    expect(hostBase(bob.out)).toEqual({ base: 100000 + MAP_SIZE, size: MAP_SIZE });
    const carol = await narrow.call('carol', 'POST', '/containers/create', { Image: 'busybox', Cmd: ['true'] });
    expect(carol.status).toBe(409);
    expect(carol.json.message).toMatch(/no subordinate id range left for owner carol.*\/etc\/subuid.*userns\.size/);
  }, 60_000);
});
