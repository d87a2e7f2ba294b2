/**
 * A container created on a user-defined network that was removed before its start: dockerd lets
 * the network go (no container runs on it), then answers the start 404 `network X not found`,
 * leaves the container `created` with exit code 128 and that error, and starts it once a network
 * of that name exists again. The sandbox answers the same, checked side by side with dockerd
 * through the same routes.
 */
import { afterAll, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { testApp } from '../helpers.js';

const sandboxPeers: PeerCheck[] = [
  { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') },
  { name: 'root with iproute2 (user-defined networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 },
];

function removedNetworkRule(title: string, peers: PeerCheck[], make: () => { runtime: ContainerRuntime; image: string; dispose?: () => void }): void {
  describeWithPeers(`${title}: starting a container whose network was removed is 404 naming the network; it starts once the network exists again`, peers, () => {
    let made: ReturnType<typeof make> | undefined;
    let app: Express;
    const net = `dg-gone-${process.pid}`;
    const name = `${net}-c`;
    const setup = (): Express => {
      if (!made) {
        made = make();
        app = testApp(made.runtime, '1.24-1.41');
      }
      return app;
    };
    afterAll(async () => {
      if (!made) return;
      await request(app).delete(`/v1.41/containers/${name}?force=1`);
      await request(app).delete(`/v1.41/networks/${net}`);
      await made.runtime.close?.();
      made.dispose?.();
    });

    test('the network goes while its container is only created; the start answers 404 and leaves the container created, exit code 128', async () => {
      const api = setup();
      expect((await request(api).post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
      const created = await request(api).post(`/v1.41/containers/create?name=${name}`).send({ Image: made!.image, Cmd: ['true'], HostConfig: { NetworkMode: net } });
      expect(created.status).toBe(201);
      expect((await request(api).delete(`/v1.41/networks/${net}`)).status).toBe(204);
      const start = await request(api).post(`/v1.41/containers/${name}/start`);
      expect({ status: start.status, body: start.body }).toEqual({ status: 404, body: { message: `network ${net} not found` } });
      const state = (await request(api).get(`/v1.41/containers/${name}/json`)).body.State;
      expect(state).toMatchObject({ Status: 'created', Running: false, ExitCode: 128, Error: `network ${net} not found` });
    });

    test('once a network of that name exists again, the container starts on it and runs to its end', async () => {
      const api = setup();
      expect((await request(api).post('/v1.41/networks/create').send({ Name: net })).status).toBe(201);
      expect((await request(api).post(`/v1.41/containers/${name}/start`)).status).toBe(204);
      const waited = await request(api).post(`/v1.41/containers/${name}/wait`);
      expect(waited.body.StatusCode).toBe(0);
      expect((await request(api).get(`/v1.41/containers/${name}/json`)).body.State).toMatchObject({ Status: 'exited', ExitCode: 0, Error: '' });
    });
  });
}

removedNetworkRule('sandbox', sandboxPeers, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-gone-net-'));
  return { runtime: sandboxRuntime({ stateDir }), image: 'busybox', dispose: () => rmSync(stateDir, { recursive: true, force: true }) };
});

removedNetworkRule('dockerd 20.10 (the reference)', [dockerd(), dockerImage('busybox:local')], () => ({ runtime: dockerRuntime({ socketPath: '/var/run/docker.sock' }), image: 'busybox:local' }));

describeWithPeers('sandbox: a container that ran on a removed network joins a network of that name made again, from its create body', sandboxPeers, () => {
  // dockerd 20.10 keeps the removed network's id in such a container and refuses its starts for
  // good (`network <old id> not found`); the sandbox joins it by name again instead of starting it off the network.
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-gone-net-ran-'));
  const runtime = sandboxRuntime({ stateDir });
  const app = testApp(runtime, '1.24-1.41');
  const net = `dg-again-${process.pid}`;
  const name = `${net}-c`;
  afterAll(async () => {
    await request(app).delete(`/v1.41/containers/${name}?force=1`);
    await request(app).delete(`/v1.41/networks/${net}`);
    await runtime.close?.();
    rmSync(stateDir, { recursive: true, force: true });
  });

  test('removed after a run, the start is 404 naming it; made again with another subnet, the container runs with an address there', async () => {
    expect((await request(app).post('/v1.41/networks/create').send({ Name: net, IPAM: { Config: [{ Subnet: '10.89.41.0/24' }] } })).status).toBe(201);
    const cmd = ['sh', '-c', 'ip -4 addr | grep -o "inet 10.89.4[12].[0-9]*"'];
    expect((await request(app).post(`/v1.41/containers/create?name=${name}`).send({ Image: 'busybox', Cmd: cmd, HostConfig: { NetworkMode: net } })).status).toBe(201);
    expect((await request(app).post(`/v1.41/containers/${name}/start`)).status).toBe(204);
    expect((await request(app).post(`/v1.41/containers/${name}/wait`)).body.StatusCode).toBe(0);
    expect((await request(app).delete(`/v1.41/networks/${net}`)).status).toBe(204);
    const refused = await request(app).post(`/v1.41/containers/${name}/start`);
    expect({ status: refused.status, body: refused.body }).toEqual({ status: 404, body: { message: `network ${net} not found` } });
    expect((await request(app).get(`/v1.41/containers/${name}/json`)).body.State).toMatchObject({ Status: 'exited', ExitCode: 128 });
    expect((await request(app).post('/v1.41/networks/create').send({ Name: net, IPAM: { Config: [{ Subnet: '10.89.42.0/24' }] } })).status).toBe(201);
    expect((await request(app).post(`/v1.41/containers/${name}/start`)).status).toBe(204);
    expect((await request(app).post(`/v1.41/containers/${name}/wait`)).body.StatusCode).toBe(0);
    const logs = await request(app).get(`/v1.41/containers/${name}/logs?stdout=1`).buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
    expect((logs.body as Buffer).toString()).toMatch(/inet 10\.89\.41\.\d+\n[\s\S]*inet 10\.89\.42\.\d+\n$/);
  });
});
