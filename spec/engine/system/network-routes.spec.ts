/**
 * The routes that change networks (`POST /networks/create`, `DELETE /networks/{id}`,
 * `POST /networks/prune`, `POST /networks/{id}/connect|disconnect`): a runtime without the
 * operation answers 501 naming it, and the Docker runtime forwards each to dockerd, whose answers come back as they are.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { testApp } from '../helpers.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd, dockerImage } from '../../support/peers.js';

describe('a runtime without user-defined networks answers 501 naming the operation', () => {
  const runtime = processRuntime({ images: { 'busybox:local': { program: '/bin/busybox' } } });
  const app = testApp(runtime, '1.12-1.43');
  afterAll(async () => runtime.close?.());

  test.each([
    ['post', '/v1.41/networks/create', { Name: 'n' }, 'creating networks is not supported by the process runtime'],
    ['delete', '/v1.41/networks/n', undefined, 'removing networks is not supported by the process runtime'],
    ['post', '/v1.41/networks/prune', undefined, 'pruning networks is not supported by the process runtime'],
    ['post', '/v1.41/networks/n/connect', { Container: 'c' }, 'connecting containers to networks is not supported by the process runtime'],
    ['post', '/v1.41/networks/n/disconnect', { Container: 'c' }, 'disconnecting containers from networks is not supported by the process runtime'],
  ] as const)('%s %s', async (method, path, body, message) => {
    const res = await (method === 'post' ? request(app).post(path).send(body ?? {}) : request(app).delete(path));
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ message });
  });
});

describeWithPeers('the Docker runtime forwards the network routes to dockerd', [dockerd(), dockerImage('busybox:local')], () => {
  const runtime = dockerRuntime({ socketPath: '/var/run/docker.sock' });
  const app = testApp(runtime, '1.24-1.41');
  const name = `dg-routes-${process.pid}`;
  afterAll(async () => {
    await request(app).delete(`/v1.41/containers/${name}-c?force=1`);
    await request(app).delete(`/v1.41/networks/${name}`);
    await runtime.close?.();
  });

  test('create (201, dockerd\'s Id), connect and disconnect a container, refuse removal while in use, remove (204)', async () => {
    const made = await request(app).post('/v1.41/networks/create').send({ Name: name, IPAM: { Config: [{ Subnet: '10.89.10.0/24' }] }, Labels: { 'dg-test': name } });
    expect(made.status).toBe(201);
    expect(made.body.Id).toMatch(/^[0-9a-f]{64}$/);
    const c = await request(app).post(`/v1.41/containers/create?name=${name}-c`).send({ Image: 'busybox:local', Cmd: ['sleep', '30'] });
    expect(c.status).toBe(201);
    expect((await request(app).post(`/v1.41/containers/${c.body.Id}/start`)).status).toBe(204);
    const connected = await request(app).post(`/v1.41/networks/${name}/connect`).send({ Container: c.body.Id, EndpointConfig: { IPAMConfig: { IPv4Address: '10.89.10.9' } } });
    expect(connected.status).toBe(200);
    expect((await request(app).get(`/v1.41/containers/${c.body.Id}/json`)).body.NetworkSettings.Networks[name]).toMatchObject({ IPAddress: '10.89.10.9' });
    const busy = await request(app).delete(`/v1.41/networks/${name}`);
    expect(busy.status).toBe(403);
    expect(busy.body.message).toContain('has active endpoints');
    expect((await request(app).post(`/v1.41/networks/${name}/disconnect`).send({ Container: c.body.Id, Force: false })).status).toBe(200);
    expect((await request(app).delete(`/v1.41/containers/${c.body.Id}?force=1`)).status).toBe(204);
    expect((await request(app).delete(`/v1.41/networks/${name}`)).status).toBe(204);
    expect((await request(app).get(`/v1.41/networks/${name}`)).status).toBe(404);
  });

  test('prune with a label filter answers dockerd\'s NetworksDeleted', async () => {
    expect((await request(app).post('/v1.41/networks/create').send({ Name: `${name}-p`, Labels: { 'dg-prune': name } })).status).toBe(201);
    const pruned = await request(app).post('/v1.41/networks/prune').query({ filters: JSON.stringify({ label: [`dg-prune=${name}`] }) });
    expect(pruned.status).toBe(200);
    expect(pruned.body).toEqual({ NetworksDeleted: [`${name}-p`] });
  });
});
