import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { release } from 'node:os';
import { testApp, testRuntime } from '../helpers.js';
import { describeWithPeers, dockerd } from '../../support/peers.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';

async function run(app: ReturnType<typeof testApp>, cmd: string[], start = true): Promise<string> {
  const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: cmd });
  const id = created.body.Id as string;
  if (start) await request(app).post(`/v1.41/containers/${id}/start`);
  return id;
}

describe('GET /info answers on every runtime, composed from the runtime and the host', () => {
  test('200 application/json with the fields the CLI prints and testcontainers reads', async () => {
    const res = await request(testApp(testRuntime().runtime, '1.12-1.43')).get('/v1.43/info');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toMatchObject({
      ID: expect.stringMatching(/^[0-9a-f-]{36}$/),
      Name: expect.any(String),
      ServerVersion: '0.1.0',
      OSType: 'linux',
      Architecture: expect.any(String),
      NCPU: expect.any(Number),
      MemTotal: expect.any(Number),
      Containers: 0,
      ContainersRunning: 0,
      ContainersPaused: 0,
      ContainersStopped: 0,
      Images: 3,
      Driver: 'none',
      DockerRootDir: '',
      Labels: [],
      DefaultRuntime: 'scripted',
      Swarm: { LocalNodeState: 'inactive' },
    });
    expect(res.body.NCPU).toBeGreaterThan(0);
    expect(res.body.MemTotal).toBeGreaterThan(0);
  });
  test('container counts follow the runtime: running, stopped', async () => {
    const { runtime, release } = testRuntime();
    const app = testApp(runtime, '1.12-1.41');
    const slowId = (await request(app).post('/v1.41/containers/create').send({ Image: 'slow:1' })).body.Id as string;
    await request(app).post(`/v1.41/containers/${slowId}/start`);
    await run(app, ['x'], false);
    const res = await request(app).get('/v1.41/info');
    expect(res.body).toMatchObject({ Containers: 2, ContainersRunning: 1, ContainersPaused: 0, ContainersStopped: 1 });
    release();
  });
  test('the ID stays the same for the router\'s life', async () => {
    const app = testApp(testRuntime().runtime);
    const a = await request(app).get('/info');
    const b = await request(app).get('/info');
    expect(a.body.ID).toBe(b.body.ID);
  });
  test('ServerVersion is the engineVersion /version reports', async () => {
    const app = testApp(testRuntime().runtime);
    const [info, version] = await Promise.all([request(app).get('/info'), request(app).get('/version')]);
    expect(info.body.ServerVersion).toBe(version.body.Version);
  });
});

describe('GET /info follows the request version as dockerd does', () => {
  const app = testApp(testRuntime().runtime, '1.12-1.43');
  test('below 1.25 it carries ExecutionDriver "<not supported>"', async () => {
    expect((await request(app).get('/v1.24/info')).body.ExecutionDriver).toBe('<not supported>');
    expect((await request(app).get('/v1.25/info')).body).not.toHaveProperty('ExecutionDriver');
  });
  test('KernelMemory is left out from 1.42', async () => {
    const runtime: ContainerRuntime = Object.assign(Object.create(testRuntime().runtime) as ContainerRuntime, { systemInfo: async () => ({ KernelMemory: true }) });
    const withKm = testApp(runtime, '1.12-1.43');
    expect((await request(withKm).get('/v1.41/info')).body.KernelMemory).toBe(true);
    expect((await request(withKm).get('/v1.42/info')).body).not.toHaveProperty('KernelMemory');
  });
  test('below 1.39 an OperatingSystem the host does not tell reads "<unknown>"', async () => {
    const base = testRuntime().runtime;
    const runtime: ContainerRuntime = Object.assign(Object.create(base) as ContainerRuntime, { systemInfo: async () => ({ OperatingSystem: '' }) });
    const unknownOs = testApp(runtime, '1.12-1.43');
    expect((await request(unknownOs).get('/v1.38/info')).body.OperatingSystem).toBe('<unknown>');
    expect((await request(unknownOs).get('/v1.39/info')).body.OperatingSystem).toBe('');
  });
});

describe('GET /version has every field dockerd gives, naming what dockgate runs on truthfully', () => {
  const app = testApp(testRuntime().runtime, '1.12-1.43');
  test('GoVersion, Os, Arch, KernelVersion and BuildTime at the top and in the Engine component; GoVersion is the Node runtime in Go\'s form', async () => {
    const res = await request(app).get('/v1.43/version');
    expect(res.status).toBe(200);
    const expected = {
      GoVersion: `node${process.versions.node}`, Os: 'linux', Arch: expect.stringMatching(/^(amd64|arm64|arm|386|s390x|ppc64le|riscv64)$/),
      KernelVersion: release(), BuildTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}\+00:00$/), GitCommit: '',
    };
    expect(res.body).toMatchObject(expected);
    expect(res.body.Components[0]).toMatchObject({ Name: 'Engine', Details: { ...expected, NodeVersion: process.version } });
    // The same values on every answer and in both places.
    const again = await request(app).get('/v1.43/version');
    expect(again.body.BuildTime).toBe(res.body.BuildTime);
    expect(res.body.Components[0].Details.BuildTime).toBe(res.body.BuildTime);
  });
  test('before 1.35 there are no Components; the top-level fields are all there', async () => {
    const res = await request(app).get('/v1.34/version');
    expect(res.body).not.toHaveProperty('Components');
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['Version', 'ApiVersion', 'MinAPIVersion', 'GitCommit', 'GoVersion', 'Os', 'Arch', 'KernelVersion', 'BuildTime']));
  });
});

describeWithPeers('GET /info through the Docker runtime is dockerd\'s own answer, with dockgate\'s ServerVersion', [dockerd()], () => {
  test('counts, driver and root dir come from dockerd', async () => {
    const runtime = dockerRuntime();
    const app = testApp(runtime, '1.12-1.41');
    const res = await request(app).get('/v1.41/info');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ServerVersion: '0.1.0', DockerRootDir: expect.stringMatching(/^\//), Driver: expect.any(String) });
    expect(res.body.Driver).not.toBe('none');
    expect(res.body.Images).toBeGreaterThanOrEqual(1);
    await runtime.close?.();
  });
});
