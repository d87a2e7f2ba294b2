import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const { call } = tenantSandbox('dockgate-iso-in-use');

/** Creates (without starting) a container as `user`; its id. */
async function created(user: string, body: object): Promise<string> {
  const res = await call(user, 'POST', '/containers/create', { Cmd: ['sleep', '30'], ...body });
  if (res.status !== 201) throw new Error(`create as ${user}: ${res.status} ${res.body.toString()}`);
  return res.json.Id as string;
}

describeWithPeers('an "in use" error says the object is in use without identifying another owner\'s container', [bwrap], () => {
  test('docker volume rm of a volume another owner\'s container mounts: "in use", no id; the owner\'s own container and the administrator are named', async () => {
    expect((await call('bob', 'POST', '/volumes/create', { Name: 'bob-inuse-vol' })).status).toBe(201);
    const alices = await created('alice', { Image: 'busybox', HostConfig: { Binds: ['bob-inuse-vol:/v'] } });

    const rm = await call('bob', 'DELETE', '/volumes/bob-inuse-vol');
    expect({ status: rm.status, body: rm.json }).toEqual({ status: 409, body: { message: 'remove bob-inuse-vol: volume is in use' } });
    expect(rm.body.toString()).not.toContain(alices.slice(0, 4));

    // The administrator reads dockerd's words, ids included; so does bob about his own container.
    expect((await call('alice', 'DELETE', '/volumes/bob-inuse-vol')).json).toEqual({ message: `remove bob-inuse-vol: volume is in use - [${alices}]` });
    const bobs = await created('bob', { Image: 'busybox', HostConfig: { Binds: ['bob-inuse-vol:/v'] } });
    expect((await call('bob', 'DELETE', '/volumes/bob-inuse-vol')).json).toEqual({ message: `remove bob-inuse-vol: volume is in use - [${bobs}]` });

    await call('alice', 'DELETE', `/containers/${alices}?force=1`);
    await call('bob', 'DELETE', `/containers/${bobs}?force=1`);
    expect((await call('bob', 'DELETE', '/volumes/bob-inuse-vol')).status).toBe(204);
  });

  test('docker rmi of an image another owner\'s container uses: "in use by a container", no id, stopped or running; the administrator gets dockerd\'s words', async () => {
    const source = await created('bob', { Image: 'busybox', Cmd: ['true'] });
    const commit = await call('bob', 'POST', `/commit?container=${source}&repo=bob/inuse&tag=1`);
    expect(commit.status).toBe(201);
    const image = (commit.json.Id as string).replace(/^sha256:/, '').slice(0, 12);
    await call('bob', 'DELETE', `/containers/${source}?force=1`);
    const alices = await created('alice', { Image: 'bob/inuse:1' });
    const short = alices.slice(0, 12);

    const byName = await call('bob', 'DELETE', '/images/bob/inuse:1');
    expect({ status: byName.status, body: byName.json }).toEqual({
      status: 409,
      body: { message: `conflict: unable to remove repository reference "bob/inuse:1" (must force) - a container is using its referenced image ${image}` },
    });
    const byId = await call('bob', 'DELETE', `/images/${image}`);
    expect({ status: byId.status, body: byId.json }).toEqual({ status: 409, body: { message: `conflict: unable to delete ${image} (must be forced) - image is being used by a stopped container` } });
    expect((await call('alice', 'DELETE', '/images/bob/inuse:1')).json).toEqual({
      message: `conflict: unable to remove repository reference "bob/inuse:1" (must force) - container ${short} is using its referenced image ${image}`,
    });

    expect((await call('alice', 'POST', `/containers/${alices}/start`)).status).toBe(204);
    const running = await call('bob', 'DELETE', `/images/${image}?force=1`);
    expect({ status: running.status, body: running.json }).toEqual({ status: 409, body: { message: `conflict: unable to delete ${image} (cannot be forced) - image is being used by a running container` } });
    for (const answer of [byName, byId, running]) expect(answer.body.toString()).not.toContain(short.slice(0, 4));

    await call('alice', 'DELETE', `/containers/${alices}?force=1`);
    expect((await call('bob', 'DELETE', '/images/bob/inuse:1')).status).toBe(200);
  });
});
