/**
 * The Docker runtime under the tenancy policy: the same checkpoint runs before anything is
 * forwarded to dockerd, and ownership is the `dockgate.owner` label dockerd keeps.
 */
import { afterAll, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { OWNER_LABEL, tenancyPolicy } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { dockerd, dockerImage, describeWithPeers } from '../../support/peers.js';
import { admin, as, policyApp } from '../../engine/policy/support.js';

describeWithPeers('dockerRuntime under tenancyPolicy: ownership kept by dockerd, host-reaching creates refused before forwarding', [dockerd(), dockerImage('busybox:local')], () => {
  const runtime = dockerRuntime({ socketPath: '/var/run/docker.sock' });
  const app = policyApp(runtime, tenancyPolicy({ admin }));
  const created: string[] = [];
  const volumes: string[] = [];
  const onDockerd = (args: string[]) => execFileSync('docker', args, { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: 'unix:///var/run/docker.sock' } });
  afterAll(async () => {
    for (const id of created) await as(app, 'root').delete(`/v1.41/containers/${id}?force=1`);
    for (const name of volumes) await as(app, 'root').delete(`/v1.41/volumes/${name}?force=1`);
    await runtime.close?.();
  });

  test("dockerd records the owner label; bob gets No such container for alice's and does not list it", async () => {
    const res = await as(app, 'alice').post('/v1.41/containers/create').send({ Image: 'busybox:local', Cmd: ['true'] });
    expect(res.status).toBe(201);
    const id = res.body.Id as string;
    created.push(id);
    expect(onDockerd(['inspect', '--format', `{{index .Config.Labels "${OWNER_LABEL}"}}`, id]).trim()).toBe('alice');
    expect((await as(app, 'bob').get(`/v1.41/containers/${id}/json`)).body).toEqual({ message: `No such container: ${id}` });
    expect(((await as(app, 'bob').get('/v1.41/containers/json?all=1')).body as { Id: string }[]).map((c) => c.Id)).not.toContain(id);
    expect(((await as(app, 'alice').get('/v1.41/containers/json?all=1')).body as { Id: string }[]).map((c) => c.Id)).toContain(id);
  });

  test('-v /:/host and --privileged are refused to a tenant before dockerd sees a create', async () => {
    const before = onDockerd(['ps', '-aq', '--no-trunc']).split('\n').filter(Boolean).length;
    for (const HostConfig of [{ Binds: ['/:/host'] }, { Privileged: true }]) {
      const res = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox:local', HostConfig });
      expect(res.status).toBe(403);
    }
    expect(onDockerd(['ps', '-aq', '--no-trunc']).split('\n').filter(Boolean).length).toBe(before);
  });

  test("a named volume belongs to its creator: bob cannot list, inspect, remove, mount or take over alice's", async () => {
    const name = `alice-data-${process.pid}`;
    volumes.push(name);
    expect((await as(app, 'alice').post('/v1.41/volumes/create').send({ Name: name })).status).toBe(201);
    expect(onDockerd(['volume', 'inspect', '--format', `{{index .Labels "${OWNER_LABEL}"}}`, name]).trim()).toBe('alice');
    expect(((await as(app, 'bob').get('/v1.41/volumes')).body.Volumes as { Name: string }[] ?? []).map((v) => v.Name)).not.toContain(name);
    expect(((await as(app, 'alice').get('/v1.41/volumes')).body.Volumes as { Name: string }[]).map((v) => v.Name)).toContain(name);
    const df = await as(app, 'bob').get('/v1.41/system/df');
    expect(((df.body.Volumes ?? []) as { Name: string }[]).map((v) => v.Name)).not.toContain(name);
    expect(((df.body.Containers ?? []) as { Labels: Record<string, string> }[]).every((c) => c.Labels?.[OWNER_LABEL] === 'bob')).toBe(true);
    for (const call of [as(app, 'bob').get(`/v1.41/volumes/${name}`), as(app, 'bob').delete(`/v1.41/volumes/${name}`)]) {
      const res = await call;
      expect({ status: res.status, body: res.body }).toEqual({ status: 404, body: { message: `get ${name}: no such volume` } });
    }
    const mount = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox:local', Cmd: ['true'], HostConfig: { Binds: [`${name}:/data`] } });
    expect({ status: mount.status, body: mount.body }).toEqual({ status: 403, body: { message: `HostConfig.Binds: No such volume: ${name}` } });
    expect((await as(app, 'bob').post('/v1.41/volumes/create').send({ Name: name })).body).toEqual({ message: `volume name ${name} is taken` });
    const forged = await as(app, 'bob').post('/v1.41/volumes/create').send({ Name: `${name}-forged`, Labels: { [OWNER_LABEL]: 'alice' } });
    expect({ status: forged.status, body: forged.body }).toEqual({ status: 403, body: { message: `Labels: the ${OWNER_LABEL} label is set by the engine` } });
    // Alice mounts her own; a name nobody created must be created first (or it would belong to nobody).
    const own = await as(app, 'alice').post('/v1.41/containers/create').send({ Image: 'busybox:local', Cmd: ['true'], HostConfig: { Binds: [`${name}:/data`] } });
    expect({ status: own.status, body: own.body }).toEqual({ status: 201, body: { Id: expect.any(String), Warnings: null } });
    created.push(own.body.Id as string);
    const fresh = await as(app, 'alice').post('/v1.41/containers/create').send({ Image: 'busybox:local', Cmd: ['true'], HostConfig: { Binds: [`never-made-${process.pid}:/data`] } });
    expect(fresh.status).toBe(403);
    expect(fresh.body.message).toMatch(/create it first with docker volume create/);
  });
});
