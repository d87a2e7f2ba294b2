import { describe, test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { scriptedRuntime } from '../../../lib/engine/runtime/scripted/index.js';
import { testApp } from '../helpers.js';

/** `busybox` runs until killed (`sleep`) or exits at once (anything else). */
const runtime = scriptedRuntime({
  images: {
    'busybox:latest': async ({ argv, signal }) => {
      if (argv[0] === 'sleep') await new Promise((resolve) => signal.addEventListener('abort', resolve));
      return {};
    },
  },
});
const app = testApp(runtime, '1.24-1.43');
afterAll(async () => runtime.close?.());

async function container(cmd: string, options: { name?: string; labels?: Record<string, string>; start?: boolean } = {}): Promise<string> {
  const created = await request(app)
    .post(`/v1.41/containers/create${options.name ? `?name=${options.name}` : ''}`)
    .send({ Image: 'busybox', Cmd: [cmd], Labels: options.labels ?? {} });
  expect(created.status).toBe(201);
  if (options.start !== false) expect((await request(app).post(`/v1.41/containers/${created.body.Id}/start`)).status).toBe(204);
  return created.body.Id as string;
}
const state = async (id: string): Promise<Record<string, unknown>> => (await request(app).get(`/v1.41/containers/${id}/json`)).body.State;

describe('POST /containers/{id}/restart stops a running container and starts it again', () => {
  test('204; running again with a new StartedAt; a stopped one is simply started', async () => {
    const id = await container('sleep');
    const before = (await state(id)).StartedAt;
    await new Promise((r) => setTimeout(r, 5));
    expect((await request(app).post(`/v1.41/containers/${id}/restart?t=0`)).status).toBe(204);
    expect(await state(id)).toMatchObject({ Status: 'running', Running: true });
    expect((await state(id)).StartedAt).not.toBe(before);
    const stopped = await container('true');
    expect((await request(app).post(`/v1.41/containers/${stopped}/restart`)).status).toBe(204);
  });
  test('a bad t is 400; unknown container 404; a bad signal (API ≥ 1.42) 400', async () => {
    expect((await request(app).post('/v1.41/containers/x/restart?t=soon')).status).toBe(400);
    expect((await request(app).post('/v1.41/containers/ghost/restart')).body).toEqual({ message: 'No such container: ghost' });
    const id = await container('sleep');
    const bad = await request(app).post(`/v1.42/containers/${id}/restart?signal=NOPE`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Invalid signal: NOPE' });
    // Below 1.42 `signal` is not a parameter of restart: dockerd does not read it.
    expect((await request(app).post(`/v1.41/containers/${id}/restart?t=0&signal=NOPE`)).status).toBe(204);
  });
});

describe('POST /containers/{id}/rename', () => {
  test('204 and the new name resolves; the old one is 404', async () => {
    const old = `ops-old-${Date.now()}`;
    const id = await container('true', { name: old, start: false });
    expect((await request(app).post(`/v1.41/containers/${id}/rename?name=${old}-new`)).status).toBe(204);
    expect((await request(app).get(`/v1.41/containers/${old}-new/json`)).body.Name).toBe(`/${old}-new`);
    expect((await request(app).get(`/v1.41/containers/${old}/json`)).status).toBe(404);
  });
  test('a name in use is 409, an invalid or empty one 400 with dockerd\'s words, the same name 400', async () => {
    const a = `ops-a-${Date.now()}`;
    const b = `ops-b-${Date.now()}`;
    const idA = await container('true', { name: a, start: false });
    const idB = await container('true', { name: b, start: false });
    const taken = await request(app).post(`/v1.41/containers/${a}/rename?name=${b}`);
    expect(taken.status).toBe(409);
    expect(taken.body.message).toContain(`The container name "/${b}" is already in use by container "${idB}"`);
    expect((await request(app).post(`/v1.41/containers/${idA}/rename?name=bad%20name`)).body).toEqual({ message: 'Invalid container name (bad name), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed' });
    expect((await request(app).post(`/v1.41/containers/${idA}/rename`)).body).toEqual({ message: 'Neither old nor new names may be empty' });
    expect((await request(app).post(`/v1.41/containers/${idA}/rename?name=${a}`)).status).toBe(400);
  });
});

describe('pause and unpause (dockerd\'s statuses and 409s)', () => {
  test('pause → State.Status paused, Paused true, still Running; ps shows "(Paused)"; unpause → running', async () => {
    const id = await container('sleep');
    expect((await request(app).post(`/v1.41/containers/${id}/pause`)).status).toBe(204);
    expect(await state(id)).toMatchObject({ Status: 'paused', Paused: true, Running: true });
    const row = (await request(app).get('/v1.41/containers/json')).body.find((c: { Id: string }) => c.Id === id);
    expect(row.State).toBe('paused');
    expect(row.Status).toMatch(/\(Paused\)$/);
    const again = await request(app).post(`/v1.41/containers/${id}/pause`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: `Container ${id} is already paused` });
    const exec = await request(app).post(`/v1.41/containers/${id}/exec`).send({ Cmd: ['true'] });
    expect(exec.status).toBe(409);
    expect(exec.body).toEqual({ message: `Container ${id} is paused, unpause the container before exec` });
    expect((await request(app).post(`/v1.41/containers/${id}/unpause`)).status).toBe(204);
    expect(await state(id)).toMatchObject({ Status: 'running', Paused: false });
    const thawed = await request(app).post(`/v1.41/containers/${id}/unpause`);
    expect(thawed.status).toBe(409);
    expect(thawed.body).toEqual({ message: `Container ${id} is not paused` });
  });
  test('pausing a stopped container is 409 "is not running"', async () => {
    const id = await container('true', { start: false });
    expect((await request(app).post(`/v1.41/containers/${id}/pause`)).body).toEqual({ message: `Container ${id} is not running` });
  });
});

describe('GET /containers/{id}/top and /stats', () => {
  test('top: Titles and Processes as dockerd shapes them; a stopped container is 409', async () => {
    const id = await container('sleep');
    const top = await request(app).get(`/v1.41/containers/${id}/top`);
    expect(top.status).toBe(200);
    expect(top.body.Titles).toEqual(['UID', 'PID', 'PPID', 'C', 'STIME', 'TTY', 'TIME', 'CMD']);
    expect(top.body.Processes[0].at(-1)).toBe('sleep');
    const stopped = await container('true', { start: false });
    expect((await request(app).get(`/v1.41/containers/${stopped}/top`)).status).toBe(409);
  });
  test('stats?stream=false: one StatsJSON object with cpu, precpu, memory and pids sections, name and id', async () => {
    const id = await container('sleep', { name: `ops-stats-${Date.now()}` });
    const res = await request(app).get(`/v1.41/containers/${id}/stats?stream=false&one-shot=true`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const stats = JSON.parse(res.text);
    expect(Object.keys(stats)).toEqual(expect.arrayContaining(['read', 'preread', 'cpu_stats', 'precpu_stats', 'memory_stats', 'pids_stats', 'blkio_stats', 'name', 'id']));
    expect(stats.id).toBe(id);
    // one-shot (API 1.41) answers without the second sample: precpu is empty and preread zero.
    expect(stats.preread).toBe('0001-01-01T00:00:00Z');
  });
  test('stats of a stopped container is the all-zero object dockerd sends', async () => {
    const id = await container('true', { start: false });
    const stats = JSON.parse((await request(app).get(`/v1.41/containers/${id}/stats?stream=0`)).text);
    expect(stats).toMatchObject({ read: '0001-01-01T00:00:00Z', pids_stats: {}, memory_stats: {}, id });
  });
});

describe('POST /containers/prune removes stopped containers matching the filters', () => {
  test('label filter: only stopped containers with the label go; running ones stay; the ids are listed', async () => {
    const label = `prune-${Date.now()}`;
    const stopped = await container('true', { labels: { [label]: '1' }, start: false });
    const running = await container('sleep', { labels: { [label]: '1' } });
    const other = await container('true', { start: false });
    const res = await request(app).post(`/v1.41/containers/prune?filters=${encodeURIComponent(JSON.stringify({ label: { [label]: true } }))}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ContainersDeleted: [stopped], SpaceReclaimed: 0 });
    expect((await request(app).get(`/v1.41/containers/${running}/json`)).status).toBe(200);
    expect((await request(app).get(`/v1.41/containers/${other}/json`)).status).toBe(200);
  });
  test('until=1h keeps containers younger than an hour; an unknown filter is 400 "Invalid filter"', async () => {
    const until = await request(app).post(`/v1.41/containers/prune?filters=${encodeURIComponent(JSON.stringify({ until: { '1h': true } }))}`);
    expect(until.body.ContainersDeleted).toBeNull();
    const bad = await request(app).post(`/v1.41/containers/prune?filters=${encodeURIComponent(JSON.stringify({ status: { exited: true } }))}`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: "Invalid filter 'status'" });
  });
});

describe('update: what a local runtime cannot honor is refused naming it', () => {
  test('the CLI\'s all-zero body is 200; a Memory limit is 400 naming Memory', async () => {
    const id = await container('sleep');
    expect((await request(app).post(`/v1.41/containers/${id}/update`).send({ Memory: 0, CpuShares: 0, RestartPolicy: { Name: '', MaximumRetryCount: 0 } })).body).toEqual({ Warnings: null });
    const res = await request(app).post(`/v1.41/containers/${id}/update`).send({ Memory: 64 * 1024 * 1024 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Memory: updating containers is not supported by the scripted runtime' });
  });
});

describe('routes a runtime lacks answer 501 naming the feature and the runtime', () => {
  test.each([
    ['get', '/v1.41/containers/x/changes', 'listing container filesystem changes is not supported by the scripted runtime'],
    ['get', '/v1.41/containers/x/archive?path=/', 'copying files (archive) is not supported by the scripted runtime'],
    ['head', '/v1.41/containers/x/archive?path=/', undefined],
    ['put', '/v1.41/containers/x/archive?path=/', 'copying files (archive) is not supported by the scripted runtime'],
  ] as const)('%s %s → 501', async (method, path, message) => {
    const res = await request(app)[method](path);
    expect(res.status).toBe(501);
    if (message) expect(res.body).toEqual({ message });
  });
  test('archive without a path is 400 with dockerd\'s words', async () => {
    expect((await request(app).get('/v1.41/containers/x/archive')).body).toEqual({ message: 'bad parameter: path cannot be empty' });
  });
  test('a bare runtime (core methods only) answers 501 for restart, pause, top, stats, prune', async () => {
    const inner = runtime;
    const bare: ContainerRuntime = {
      name: 'bare',
      create: (r) => inner.create(r), start: (id) => inner.start(id), wait: (id, c, s) => inner.wait(id, c, s), logs: (id, o) => inner.logs(id, o),
      attach: (id, o) => inner.attach(id, o), inspect: (id) => inner.inspect(id), list: (o) => inner.list(o), remove: (id, o) => inner.remove(id, o),
      events: (o) => inner.events(o),
    };
    const bareApp = testApp(bare, '1.24-1.43');
    expect((await request(bareApp).post('/v1.41/containers/x/restart')).body).toEqual({ message: 'restarting containers is not supported by the bare runtime' });
    expect((await request(bareApp).post('/v1.41/containers/x/pause')).body).toEqual({ message: 'pausing containers is not supported by the bare runtime' });
    expect((await request(bareApp).get('/v1.41/containers/x/top')).body).toEqual({ message: 'listing container processes (top) is not supported by the bare runtime' });
    expect((await request(bareApp).get('/v1.41/containers/x/stats')).body).toEqual({ message: 'container stats is not supported by the bare runtime' });
    expect((await request(bareApp).post('/v1.41/containers/prune')).body).toEqual({ message: 'pruning containers is not supported by the bare runtime' });
  });
});
