/**
 * A container may be created on a user network that does not exist yet (dockerd's, and what
 * docker-compose does); its start joins the network by name. Under tenancyPolicy a network of that
 * name made by another tenant in between is one that does not exist for the container: its start
 * (and restart) is 404 `network X not found`, and it never joins another tenant's network. Its
 * owner's network of that name is joined. Checked on the sandbox runtime and, since the policy
 * holds it for every runtime, on the Docker runtime (dockerd itself joins any network of that name).
 */
import { afterAll, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tenancyPolicy } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { admin, as, policyApp } from './support.js';

const peers: PeerCheck[] = [
  { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') },
  { name: 'root with iproute2 (networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 },
];

describeWithPeers('a network made after a container\'s create is joined at its start only when it is the container owner\'s (sandbox runtime, tenancyPolicy)', peers, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-late-net-'));
  const runtime = sandboxRuntime({ stateDir });
  const app = policyApp(runtime, tenancyPolicy({ admin }));
  const net = `dg-late-${process.pid}`;
  afterAll(async () => {
    await as(app, 'root').delete(`/v1.41/networks/${net}`);
    await runtime.close?.();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('bob\'s container on a network that does not exist is created; once alice makes a network of that name, its start is 404 and it is on no network of hers; once that network is gone and bob makes his own, it starts there', async () => {
    const created = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['true'], HostConfig: { NetworkMode: net } });
    expect(created.status).toBe(201);
    const id = created.body.Id as string;
    expect((await as(app, 'alice').post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
    const refused = await as(app, 'bob').post(`/v1.41/containers/${id}/start`);
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 404, body: { message: `network ${net} not found` } });
    const hers = await as(app, 'alice').get(`/v1.41/networks/${net}`);
    expect(Object.keys(hers.body.Containers ?? {})).toEqual([]);
    expect((await as(app, 'alice').delete(`/v1.41/networks/${net}`)).status).toBe(204);
    expect((await as(app, 'bob').post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
    expect((await as(app, 'bob').post(`/v1.41/containers/${id}/start`)).status).toBe(204);
    expect((await as(app, 'bob').post(`/v1.41/containers/${id}/wait`)).body.StatusCode).toBe(0);
  });
});

describeWithPeers('a network made after a container\'s create is joined at its start or restart only when it is the container owner\'s (Docker runtime, tenancyPolicy)', [dockerd(), dockerImage('busybox:local')], () => {
  const runtime = dockerRuntime({ socketPath: '/var/run/docker.sock' });
  const app = policyApp(runtime, tenancyPolicy({ admin }));
  const net = `dg-late-d-${process.pid}`;
  const made: string[] = [];
  afterAll(async () => {
    for (const id of made) await as(app, 'root').delete(`/v1.41/containers/${id}?force=1`);
    await as(app, 'root').delete(`/v1.41/networks/${net}`);
    await runtime.close?.();
  });

  test('bob\'s container on a network that does not exist is created; once alice makes a network of that name, its start and restart are 404 and it is on no network of hers; once that network is gone and bob makes his own, it starts there', async () => {
    const created = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox:local', Cmd: ['true'], HostConfig: { NetworkMode: net } });
    expect(created.status).toBe(201);
    const id = created.body.Id as string;
    made.push(id);
    expect((await as(app, 'alice').post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
    for (const verb of ['start', 'restart']) {
      const refused = await as(app, 'bob').post(`/v1.41/containers/${id}/${verb}`);
      expect({ verb, status: refused.status, body: refused.body }).toEqual({ verb, status: 404, body: { message: `network ${net} not found` } });
    }
    const hers = await as(app, 'alice').get(`/v1.41/networks/${net}`);
    expect(Object.keys(hers.body.Containers ?? {})).toEqual([]);
    expect((await as(app, 'root').get(`/v1.41/containers/${id}/json`)).body.State.Status).toBe('created');
    expect((await as(app, 'alice').delete(`/v1.41/networks/${net}`)).status).toBe(204);
    expect((await as(app, 'bob').post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
    expect((await as(app, 'bob').post(`/v1.41/containers/${id}/start`)).status).toBe(204);
    expect((await as(app, 'bob').post(`/v1.41/containers/${id}/wait`)).body.StatusCode).toBe(0);
  });
});
