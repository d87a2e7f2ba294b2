/**
 * Under ownershipPolicy a user-defined network belongs to the subject that created it (its
 * dockgate.owner label): another tenant cannot remove it, connect to it, run a container on it,
 * prune it, or connect someone else's container to their own. Checked through the Docker runtime
 * on dockerd, whose networks keep the label.
 */
import { afterAll, expect, test } from '@jest/globals';
import { OWNER_LABEL, ownershipPolicy } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd, dockerImage } from '../../support/peers.js';
import { admin, as, policyApp } from './support.js';

const IMAGE = 'busybox:local';

describeWithPeers('a network belongs to the subject that created it', [dockerd(), dockerImage(IMAGE)], () => {
  const runtime = dockerRuntime({ socketPath: '/var/run/docker.sock' });
  const app = policyApp(runtime, ownershipPolicy({ admin }));
  const net = `dg-own-${process.pid}`;
  const made: string[] = [];
  const container = async (user: string, name: string): Promise<string> => {
    const res = await as(app, user).post(`/v1.41/containers/create?name=${name}`).send({ Image: IMAGE, Cmd: ['sleep', '30'] });
    expect(res.status).toBe(201);
    made.push(res.body.Id);
    return res.body.Id as string;
  };
  afterAll(async () => {
    for (const id of made) await as(app, 'root').delete(`/v1.41/containers/${id}?force=1`);
    await as(app, 'root').delete(`/v1.41/networks/${net}`);
    await runtime.close?.();
  });

  test('create records the caller as owner; a caller may not set the label to another, nor create signed out', async () => {
    const res = await as(app, 'alice').post('/v1.41/networks/create').send({ Name: net });
    expect(res.status).toBe(201);
    expect((await as(app, 'alice').get(`/v1.41/networks/${net}`)).body.Labels).toEqual({ [OWNER_LABEL]: 'alice' });
    const forged = await as(app, 'bob').post('/v1.41/networks/create').send({ Name: `${net}-x`, Labels: { [OWNER_LABEL]: 'alice' } });
    expect(forged.status).toBe(403);
    expect(forged.body.message).toBe(`Labels: the ${OWNER_LABEL} label is set by the engine`);
    expect((await as(app, undefined).post('/v1.41/networks/create').send({ Name: `${net}-y` })).status).toBe(403);
  });

  test("bob cannot remove, connect to or disconnect from alice's network: it does not exist for him (404)", async () => {
    const bobs = await container('bob', `${net}-bob`);
    for (const res of [
      await as(app, 'bob').delete(`/v1.41/networks/${net}`),
      await as(app, 'bob').post(`/v1.41/networks/${net}/connect`).send({ Container: bobs }),
      await as(app, 'bob').post(`/v1.41/networks/${net}/disconnect`).send({ Container: bobs }),
    ]) {
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: `network ${net} not found` } });
    }
    const run = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: IMAGE, HostConfig: { NetworkMode: net } });
    expect({ status: run.status, body: run.body }).toEqual({ status: 403, body: { message: `HostConfig.NetworkMode: network ${net} not found` } });
    const endpoints = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: IMAGE, NetworkingConfig: { EndpointsConfig: { [net]: {} } } });
    expect(endpoints.status).toBe(403);
  });

  test("alice cannot connect bob's container to her network; her own she can", async () => {
    const bobs = await container('bob', `${net}-bob2`);
    const res = await as(app, 'alice').post(`/v1.41/networks/${net}/connect`).send({ Container: bobs });
    expect({ status: res.status, body: res.body }).toEqual({ status: 403, body: { message: `Container: No such container: ${bobs}` } });
    const hers = await container('alice', `${net}-alice`);
    expect((await as(app, 'alice').post(`/v1.41/networks/${net}/connect`).send({ Container: hers })).status).toBe(200);
    expect((await as(app, 'alice').post(`/v1.41/networks/${net}/disconnect`).send({ Container: hers })).status).toBe(200);
  });

  test("bob's prune does not touch alice's network; alice removes it", async () => {
    const pruned = await as(app, 'bob').post('/v1.41/networks/prune');
    expect(pruned.status).toBe(200);
    expect(pruned.body.NetworksDeleted ?? []).not.toContain(net);
    expect((await as(app, 'alice').get(`/v1.41/networks/${net}`)).status).toBe(200);
    expect((await as(app, 'alice').delete(`/v1.41/networks/${net}`)).status).toBe(204);
  });
});
