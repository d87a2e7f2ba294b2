import { afterAll, describe, expect, test } from '@jest/globals';
import { OWNER_LABEL, ownershipPolicy } from '../../../lib/engine/index.js';
import { admin, as, containerOf, policyApp, policyRuntime } from './support.js';

const runtime = policyRuntime();
/** `/events` is JSON lines, which superagent's JSON parser refuses. */
const asText = (res: unknown, done: (err: Error | null, body: unknown) => void): void => {
  let text = '';
  const stream = res as NodeJS.ReadableStream;
  stream.on('data', (c: Buffer) => (text += c.toString()));
  stream.on('end', () => done(null, text));
};
const app = policyApp(runtime, ownershipPolicy({ admin }));
afterAll(() => runtime.close?.());

describe('a container belongs to the subject that created it, recorded in its dockgate.owner label', () => {
  test('create records the caller as owner', async () => {
    const id = await containerOf(app, 'alice');
    const inspected = await as(app, 'alice').get(`/v1.41/containers/${id}/json`);
    expect(inspected.status).toBe(200);
    expect(inspected.body.Config.Labels).toEqual({ [OWNER_LABEL]: 'alice' });
  });

  test('a caller may not set the owner label to someone else (403 naming the field)', async () => {
    const res = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox', Labels: { [OWNER_LABEL]: 'alice' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: `Labels: the ${OWNER_LABEL} label is set by the engine` });
  });

  test('a legacy link of another\'s container cannot be removed: 404 as if the container did not exist; its owner reaches the runtime (501 here: no links)', async () => {
    const id = await containerOf(app, 'alice');
    const res = await as(app, 'bob').delete(`/v1.41/containers/${id}/x?link=true`);
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/^No such container/);
    expect((await as(app, 'alice').delete(`/v1.41/containers/${id}/x?link=true`)).status).toBe(501);
  });

  test('a caller may not give the volume a mount makes someone else\'s owner label (403 naming VolumeOptions.Labels)', async () => {
    const res = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox', HostConfig: { Mounts: [{ Type: 'volume', Target: '/v', VolumeOptions: { Labels: { [OWNER_LABEL]: 'alice' } } }] } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: `HostConfig.Mounts.VolumeOptions.Labels: the ${OWNER_LABEL} label is set by the engine` });
  });

  test('an administrator may create a container on behalf of another', async () => {
    const res = await as(app, 'root').post('/v1.41/containers/create').send({ Image: 'busybox', Labels: { [OWNER_LABEL]: 'carol' } });
    expect(res.status).toBe(201);
    expect((await as(app, 'carol').get(`/v1.41/containers/${res.body.Id}/json`)).status).toBe(200);
  });

  test('a caller nobody signed in cannot create a container (it could belong to nobody)', async () => {
    const res = await as(app, undefined).post('/v1.41/containers/create').send({ Image: 'busybox' });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/needs a signed-in caller/);
  });
});

describe("another tenant's container does not exist for bob: 404 in dockerd's words", () => {
  const routes: [string, string, (id: string) => string][] = [
    ['GET', 'inspect', (id) => `/v1.41/containers/${id}/json`],
    ['GET', 'logs', (id) => `/v1.41/containers/${id}/logs?stdout=1`],
    ['POST', 'start', (id) => `/v1.41/containers/${id}/start`],
    ['POST', 'stop', (id) => `/v1.41/containers/${id}/stop`],
    ['POST', 'restart', (id) => `/v1.41/containers/${id}/restart`],
    ['POST', 'wait', (id) => `/v1.41/containers/${id}/wait`],
    ['POST', 'attach', (id) => `/v1.41/containers/${id}/attach?stream=1&stdout=1`],
    ['DELETE', 'rm -f', (id) => `/v1.41/containers/${id}?force=1`],
    ['GET', 'stats', (id) => `/v1.41/containers/${id}/stats?stream=0`],
    ['GET', 'top', (id) => `/v1.41/containers/${id}/top`],
    ['GET', 'changes', (id) => `/v1.41/containers/${id}/changes`],
    ['POST', 'rename', (id) => `/v1.41/containers/${id}/rename?name=stolen`],
    ['POST', 'pause', (id) => `/v1.41/containers/${id}/pause`],
    ['POST', 'update', (id) => `/v1.41/containers/${id}/update`],
    ['POST', 'exec create', (id) => `/v1.41/containers/${id}/exec`],
    ['GET', 'archive', (id) => `/v1.41/containers/${id}/archive?path=/`],
    ['POST', 'resize', (id) => `/v1.41/containers/${id}/resize?h=1&w=1`],
  ];
  test.each(routes)('%s %s of alice\'s container answers 404 No such container, by id, prefix and name', async (method, _what, path) => {
    const name = `alice-${Math.random().toString(36).slice(2, 8)}`;
    const id = await containerOf(app, 'alice', { start: true, name });
    for (const ref of [id, id.slice(0, 12), name]) {
      const call = as(app, 'bob')[method.toLowerCase() as 'get' | 'post' | 'delete'](path(ref));
      const res = method === 'POST' && path(ref).endsWith('/exec') ? await call.send({ Cmd: ['echo'] }) : await call;
      expect({ ref, status: res.status, body: res.body }).toEqual({ ref, status: 404, body: { message: `No such container: ${ref}` } });
    }
    // Nothing happened to it: still running, still named.
    const inspected = await as(app, 'alice').get(`/v1.41/containers/${id}/json`);
    expect(inspected.body.State.Running).toBe(true);
    expect(inspected.body.Name).toBe(`/${name}`);
    await as(app, 'alice').delete(`/v1.41/containers/${id}?force=1`);
  });

  test("kill answers dockerd's own kill wording", async () => {
    const id = await containerOf(app, 'alice', { start: true });
    const res = await as(app, 'bob').post(`/v1.41/containers/${id}/kill`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: `Cannot kill container: ${id}: No such container: ${id}` });
    await as(app, 'alice').delete(`/v1.41/containers/${id}?force=1`);
  });

  test('the owner and an administrator still reach it', async () => {
    const id = await containerOf(app, 'alice');
    expect((await as(app, 'alice').get(`/v1.41/containers/${id}/json`)).status).toBe(200);
    expect((await as(app, 'root').get(`/v1.41/containers/${id}/json`)).status).toBe(200);
  });
});

describe("an exec belongs to its container's owner", () => {
  test("bob cannot start, inspect or resize an exec in alice's container: 404 No such exec instance", async () => {
    const id = await containerOf(app, 'alice', { start: true });
    const exec = await as(app, 'alice').post(`/v1.41/containers/${id}/exec`).send({ Cmd: ['echo', 'hi'], AttachStdout: true });
    expect(exec.status).toBe(201);
    const execId = exec.body.Id as string;
    for (const [method, path] of [['post', `/v1.41/exec/${execId}/start`], ['get', `/v1.41/exec/${execId}/json`], ['post', `/v1.41/exec/${execId}/resize?h=1&w=1`]] as const) {
      const call = as(app, 'bob')[method](path);
      const res = method === 'post' && path.endsWith('/start') ? await call.send({ Detach: true }) : await call;
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: { message: `No such exec instance: ${execId}` } });
    }
    expect((await as(app, 'alice').get(`/v1.41/exec/${execId}/json`)).status).toBe(200);
    await as(app, 'alice').delete(`/v1.41/containers/${id}?force=1`);
  });
});

describe("others' containers are absent from lists, info, system df, events and prune", () => {
  test('docker ps -a, info counts and system df show bob only his own', async () => {
    const alices = await containerOf(app, 'alice');
    const bobs = await containerOf(app, 'bob');
    const list = await as(app, 'bob').get('/v1.41/containers/json?all=1');
    const ids = (list.body as { Id: string }[]).map((c) => c.Id);
    expect(ids).toContain(bobs);
    expect(ids).not.toContain(alices);
    expect((list.body as { Labels: Record<string, string> }[]).every((c) => c.Labels[OWNER_LABEL] === 'bob')).toBe(true);
    const info = await as(app, 'bob').get('/v1.41/info');
    expect(info.body.Containers).toBe(ids.length);
    const df = await as(app, 'bob').get('/v1.41/system/df');
    expect((df.body.Containers as { Id: string }[]).map((c) => c.Id).sort()).toEqual([...ids].sort());
    // An administrator sees both.
    const all = ((await as(app, 'root').get('/v1.41/containers/json?all=1')).body as { Id: string }[]).map((c) => c.Id);
    expect(all).toEqual(expect.arrayContaining([alices, bobs]));
  });

  test("events of alice's containers never reach bob", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const alices = await containerOf(app, 'alice', { start: true });
    const bobs = await containerOf(app, 'bob');
    const until = Math.floor(Date.now() / 1000) + 1;
    const events = await as(app, 'bob').get(`/v1.41/events?since=${since}&until=${until}`).buffer(true).parse(asText);
    const seen = (events.body as string).trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { Actor: { ID: string } });
    expect(seen.map((e) => e.Actor.ID)).toContain(bobs);
    expect(seen.map((e) => e.Actor.ID)).not.toContain(alices);
    await as(app, 'alice').delete(`/v1.41/containers/${alices}?force=1`);
  });

  test("container prune by bob removes his stopped containers and leaves alice's", async () => {
    const alices = await containerOf(app, 'alice');
    const bobs = await containerOf(app, 'bob');
    const pruned = await as(app, 'bob').post('/v1.41/containers/prune');
    expect(pruned.status).toBe(200);
    expect(pruned.body.ContainersDeleted).toContain(bobs);
    expect(pruned.body.ContainersDeleted).not.toContain(alices);
    expect((await as(app, 'alice').get(`/v1.41/containers/${alices}/json`)).status).toBe(200);
  });
});

describe('a create may not name another tenant\'s container', () => {
  test.each([
    ['HostConfig.NetworkMode', (id: string) => ({ NetworkMode: `container:${id}` })],
    ['HostConfig.PidMode', (id: string) => ({ PidMode: `container:${id}` })],
    ['HostConfig.IpcMode', (id: string) => ({ IpcMode: `container:${id}` })],
    ['HostConfig.VolumesFrom', (id: string) => ({ VolumesFrom: [`${id}:ro`] })],
    ['HostConfig.Links', (id: string) => ({ Links: [`${id}:db`] })],
  ])('%s naming alice\'s container is refused as if it did not exist', async (field, host) => {
    const alices = await containerOf(app, 'alice');
    const res = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox', HostConfig: host(alices) });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: `${field}: No such container: ${alices}` });
  });  test('NetworkingConfig.EndpointsConfig.Links naming alice\'s container is refused as if it did not exist', async () => {
    const alices = await containerOf(app, 'alice');
    const res = await as(app, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox', NetworkingConfig: { EndpointsConfig: { bridge: { Links: [`${alices}:db`] } } } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: `NetworkingConfig.EndpointsConfig.Links: No such container: ${alices}` });
  });
});
