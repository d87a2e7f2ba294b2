import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { testApp, testRuntime } from '../helpers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';

const app = (): ReturnType<typeof testApp> => testApp(testRuntime().runtime, '1.12-1.45');
const BUSYBOX_ID = expect.stringMatching(/^sha256:[0-9a-f]{64}$/);

describe('GET /images/json lists the runtime\'s images with dockerd\'s summary shape', () => {
  test('every configured image, RepoTags in familiar form, SharedSize and Containers -1/n', async () => {
    const res = await request(app()).get('/v1.43/images/json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.map((i: { RepoTags: string[] }) => i.RepoTags[0]).sort()).toEqual(['busybox:latest', 'fail:1', 'slow:1']);
    expect(res.body[0]).toMatchObject({ Id: BUSYBOX_ID, ParentId: '', RepoDigests: [], Created: expect.any(Number), Size: expect.any(Number), SharedSize: -1, Labels: {} });
  });
  test('shared-size (1.42+) computes SharedSize (0: local images share no layers); below 1.42 it is not read', async () => {
    const a = app();
    expect((await request(a).get('/v1.42/images/json?shared-size=1')).body[0].SharedSize).toBe(0);
    expect((await request(a).get('/v1.41/images/json?shared-size=1')).body[0].SharedSize).toBe(-1);
  });
  test('VirtualSize is there below 1.44 and gone from 1.44', async () => {
    const a = app();
    expect((await request(a).get('/v1.43/images/json')).body[0]).toHaveProperty('VirtualSize');
    expect((await request(a).get('/v1.44/images/json')).body[0]).not.toHaveProperty('VirtualSize');
  });
  test('the reference filter is a glob; the old `filter` parameter works only below 1.41', async () => {
    const a = app();
    const byFilters = await request(a).get(`/v1.43/images/json?filters=${encodeURIComponent('{"reference":{"busy*":true}}')}`);
    expect(byFilters.body.map((i: { RepoTags: string[] }) => i.RepoTags)).toEqual([['busybox:latest']]);
    expect((await request(a).get('/v1.40/images/json?filter=fail')).body).toHaveLength(1);
    expect((await request(a).get('/v1.41/images/json?filter=fail')).body).toHaveLength(3);
  });
  test('an unknown filter is 400 naming it', async () => {
    const res = await request(app()).get(`/v1.43/images/json?filters=${encodeURIComponent('{"colour":{"red":true}}')}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: "Invalid filter 'colour'" });
  });
});

describe('GET /images/{name}/json and /history resolve a reference, a full id or an id prefix', () => {
  test('by name, by sha256 id and by a short id', async () => {
    const a = app();
    const byName = await request(a).get('/v1.43/images/busybox/json');
    expect(byName.status).toBe(200);
    expect(byName.body).toMatchObject({ Id: BUSYBOX_ID, RepoTags: ['busybox:latest'], Config: { Cmd: ['run'] }, RootFS: { Type: 'layers' }, Os: 'linux' });
    const id = byName.body.Id as string;
    for (const ref of [id, id.slice(7, 19)]) expect((await request(a).get(`/v1.43/images/${ref}/json`)).body.Id).toBe(id);
    const history = await request(a).get('/v1.43/images/busybox:latest/history');
    expect(history.status).toBe(200);
    expect(history.body).toEqual([expect.objectContaining({ Id: id, Tags: ['busybox:latest'], CreatedBy: 'configured in the scripted runtime' })]);
  });
  test('an unknown image is 404 "No such image: <ref>"', async () => {
    const res = await request(app()).get('/v1.43/images/nope:1/json');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'No such image: nope:1' });
  });
  test('ContainerConfig is gone from 1.45', async () => {
    const a = app();
    expect((await request(a).get('/v1.44/images/busybox/json')).body).toHaveProperty('ContainerConfig');
    expect((await request(a).get('/v1.45/images/busybox/json')).body).not.toHaveProperty('ContainerConfig');
  });
});

describe('POST /images/{name}/tag and DELETE /images/{name} follow dockerd', () => {
  test('tag answers 201; the new reference runs the same image; rmi untags it without deleting the image', async () => {
    const a = app();
    const tag = await request(a).post('/v1.43/images/busybox/tag?repo=127.0.0.1:5000/team/box&tag=v1');
    expect(tag.status).toBe(201);
    const tagged = await request(a).get('/v1.43/images/127.0.0.1:5000/team/box:v1/json');
    expect(tagged.body.RepoTags.sort()).toEqual(['127.0.0.1:5000/team/box:v1', 'busybox:latest']);
    const created = await request(a).post('/v1.43/containers/create').send({ Image: '127.0.0.1:5000/team/box:v1', Cmd: ['x'] });
    expect(created.status).toBe(201);
    const rmi = await request(a).delete('/v1.43/images/127.0.0.1:5000/team/box:v1');
    expect(rmi.status).toBe(200);
    expect(rmi.body).toEqual([{ Untagged: '127.0.0.1:5000/team/box:v1' }]);
    expect((await request(a).get('/v1.43/images/127.0.0.1:5000/team/box:v1/json')).status).toBe(404);
  });
  test('a bad tag is 400; no repo is 400; a digest is refused', async () => {
    const a = app();
    expect((await request(a).post('/v1.43/images/busybox/tag?repo=Bad!&tag=1')).status).toBe(400);
    expect((await request(a).post('/v1.43/images/busybox/tag')).body).toEqual({ message: 'repository name must have at least one component' });
    expect((await request(a).post('/v1.43/images/busybox/tag?repo=x@sha256:abc')).body).toEqual({ message: 'refusing to create a tag with a digest reference' });
  });
  test('removing the last reference deletes the image; in use by a stopped container it needs force', async () => {
    const a = app();
    const rmi = await request(a).delete('/v1.43/images/fail:1');
    expect(rmi.body).toEqual([{ Untagged: 'fail:1' }, { Deleted: BUSYBOX_ID }]);
    await request(a).post('/v1.43/containers/create').send({ Image: 'slow:1' });
    const refused = await request(a).delete('/v1.43/images/slow:1');
    expect(refused.status).toBe(409);
    expect(refused.body.message).toMatch(/^conflict: unable to remove repository reference "slow:1" \(must force\) - container [0-9a-f]{12} is using its referenced image [0-9a-f]{12}$/);
    expect((await request(a).delete('/v1.43/images/slow:1?force=1')).body).toEqual([{ Untagged: 'slow:1' }]);
    expect((await request(a).delete('/v1.43/images/nope')).status).toBe(404);
  });
  test('prune removes nothing by default (no local image is dangling); dangling=false removes unused ones', async () => {
    const a = app();
    expect((await request(a).post('/v1.43/images/prune')).body).toEqual({ ImagesDeleted: null, SpaceReclaimed: 0 });
    await request(a).post('/v1.43/containers/create').send({ Image: 'busybox', Cmd: ['x'] });
    const res = await request(a).post(`/v1.43/images/prune?filters=${encodeURIComponent('{"dangling":{"false":true}}')}`);
    expect(res.status).toBe(200);
    expect(res.body.ImagesDeleted.filter((d: object) => 'Untagged' in d)).toEqual([{ Untagged: 'fail:1' }, { Untagged: 'slow:1' }]);
    expect((await request(a).get('/v1.43/images/json')).body.map((i: { RepoTags: string[] }) => i.RepoTags[0])).toEqual(['busybox:latest']);
  });
});

describe('a missing optional operation answers 501 naming the feature and the runtime', () => {
  test('save and load on the scripted runtime', async () => {
    const a = app();
    const save = await request(a).get('/v1.43/images/busybox/get');
    expect(save.status).toBe(501);
    expect(save.headers['content-type']).toBe('application/json');
    expect(save.body).toEqual({ message: 'saving images (docker save) is not supported by the scripted runtime' });
    expect((await request(a).get('/v1.43/images/get?names=busybox')).status).toBe(501);
    const load = await request(a).post('/v1.43/images/load').set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024));
    expect(load.status).toBe(501);
    expect(load.body).toEqual({ message: 'loading images (docker load) is not supported by the scripted runtime' });
    expect((await request(a).post('/v1.43/volumes/create').send({ Name: 'v' })).body).toEqual({ message: 'creating volumes is not supported by the scripted runtime' });
    expect((await request(a).delete('/v1.43/volumes/v')).status).toBe(501);
  });
  test('a host runtime without image operations: /images/json is 501, /info still answers', async () => {
    const base = testRuntime().runtime;
    const bare: ContainerRuntime = {
      name: 'bare',
      create: (r) => base.create(r), start: (id) => base.start(id), wait: (...a) => base.wait(...a), logs: (...a) => base.logs(...a),
      attach: (...a) => base.attach(...a), inspect: (id) => base.inspect(id), list: (o) => base.list(o), remove: (...a) => base.remove(...a), events: (o) => base.events(o),
    };
    const a = testApp(bare, '1.12-1.43');
    expect((await request(a).get('/v1.43/images/json')).body).toEqual({ message: 'listing images is not supported by the bare runtime' });
    expect((await request(a).get('/v1.43/networks')).status).toBe(501);
    expect((await request(a).get('/v1.43/volumes')).status).toBe(501);
    const info = await request(a).get('/v1.43/info');
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ Images: 0, DefaultRuntime: 'bare' });
  });
});

describe('GET /networks and /networks/{id}: the networks the runtime really has', () => {
  test('the scripted runtime has `none` (driver null, scope local), and no bridge', async () => {
    const a = app();
    const res = await request(a).get('/v1.43/networks');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([expect.objectContaining({ Name: 'none', Driver: 'null', Scope: 'local', Id: expect.stringMatching(/^[0-9a-f]{64}$/), Containers: {} })]);
    const byName = await request(a).get('/v1.43/networks/none');
    expect(byName.body.Id).toBe(res.body[0].Id);
    expect((await request(a).get(`/v1.43/networks/${(res.body[0].Id as string).slice(0, 12)}`)).body.Name).toBe('none');
    const bridge = await request(a).get('/v1.43/networks/bridge');
    expect(bridge.status).toBe(404);
    expect(bridge.body).toEqual({ message: 'network bridge not found' });
  });
  test('scope (1.31+) must match; below 1.31 it is not read', async () => {
    const a = app();
    expect((await request(a).get('/v1.43/networks/none?scope=swarm')).status).toBe(404);
    expect((await request(a).get('/v1.30/networks/none?scope=swarm')).status).toBe(200);
    expect((await request(a).get('/v1.43/networks/none?scope=planet')).status).toBe(400);
  });
  test('filters: driver and type; an unknown filter is 400', async () => {
    const a = app();
    expect((await request(a).get(`/v1.43/networks?filters=${encodeURIComponent('{"driver":{"bridge":true}}')}`)).body).toEqual([]);
    expect((await request(a).get(`/v1.43/networks?filters=${encodeURIComponent('{"type":{"builtin":true}}')}`)).body).toHaveLength(1);
    expect((await request(a).get(`/v1.43/networks?filters=${encodeURIComponent('{"colour":{"x":true}}')}`)).status).toBe(400);
  });
});

describe('GET /volumes on a runtime without volume storage lists none; inspect is 404', () => {
  test('{ Volumes: [], Warnings: null } and 404 "get x: no such volume"', async () => {
    const a = app();
    expect((await request(a).get('/v1.43/volumes')).body).toEqual({ Volumes: [], Warnings: null });
    const one = await request(a).get('/v1.43/volumes/data');
    expect(one.status).toBe(404);
    expect(one.body).toEqual({ message: 'get data: no such volume' });
  });
});

describe('GET /system/df composes images, containers and volumes; `type` from 1.42; BuilderSize 1.31–1.41', () => {
  test('sections and version differences', async () => {
    const a = app();
    await request(a).post('/v1.43/containers/create').send({ Image: 'busybox', Cmd: ['x'] });
    const all = await request(a).get('/v1.43/system/df');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ LayersSize: expect.any(Number), Volumes: [], BuildCache: [] });
    expect(all.body.Images).toHaveLength(3);
    expect(all.body.Containers).toEqual([expect.objectContaining({ SizeRw: 0, SizeRootFs: 0, Image: 'busybox' })]);
    expect(all.body).not.toHaveProperty('BuilderSize');
    expect((await request(a).get('/v1.41/system/df')).body.BuilderSize).toBe(0);
    const onlyImages = await request(a).get('/v1.43/system/df?type=image');
    expect(Object.keys(onlyImages.body).sort()).toEqual(['Images', 'LayersSize']);
    expect(Object.keys((await request(a).get('/v1.41/system/df?type=image')).body)).toContain('Containers');
    expect((await request(a).get('/v1.43/system/df?type=disks')).status).toBe(400);
  });
});

describe('tag, untag and delete are image events on /events', () => {
  test('docker events --filter type=image sees tag then untag and delete', async () => {
    const a = app();
    const since = Math.floor(Date.now() / 1000) - 1;
    await request(a).post('/v1.43/images/fail:1/tag?repo=again&tag=2');
    await request(a).delete('/v1.43/images/again:2');
    await request(a).delete('/v1.43/images/fail:1');
    const until = Math.floor(Date.now() / 1000) + 1;
    const res = await request(a)
      .get(`/v1.43/events?since=${since}&until=${until}&filters=${encodeURIComponent('{"type":{"image":true}}')}`)
      .parse((stream, cb) => {
        let text = '';
        stream.on('data', (c: Buffer) => (text += c.toString()));
        stream.on('end', () => cb(null, text));
      });
    const events = (res.body as string).trim().split('\n').map((l) => JSON.parse(l) as { Action: string; Type: string; Actor: { Attributes: { name: string } } });
    expect(events.map((e) => `${e.Action} ${e.Actor.Attributes.name}`)).toEqual(['tag again:2', 'untag again:2', 'untag fail:1', expect.stringMatching(/^delete sha256:/)]);
  });
});

describe('DELETE /images/{id}: dockerd\'s conflicts when an image is named by id', () => {
  test('referenced twice → must be forced; used by a stopped container → must be forced; forced → untagged and deleted', async () => {
    const a = app();
    const id = (await request(a).get('/v1.43/images/fail:1/json')).body.Id as string;
    const short = id.slice(7, 19);
    await request(a).post('/v1.43/images/fail:1/tag?repo=other&tag=1');
    const twice = await request(a).delete(`/v1.43/images/${short}`);
    expect(twice.status).toBe(409);
    expect(twice.body.message).toBe(`conflict: unable to delete ${short} (must be forced) - image is referenced in multiple repositories`);
    await request(a).delete('/v1.43/images/other:1');
    const c = (await request(a).post('/v1.43/containers/create').send({ Image: 'fail:1' })).body.Id as string;
    const stopped = await request(a).delete(`/v1.43/images/${id}`);
    expect(stopped.body.message).toBe(`conflict: unable to delete ${short} (must be forced) - image is being used by stopped container ${c.slice(0, 12)}`);
    expect((await request(a).delete(`/v1.43/images/${id}?force=1`)).body).toEqual([{ Untagged: 'fail:1' }, { Deleted: id }]);
  });
  test('used by a running container → 409 that force cannot override', async () => {
    const { runtime, release } = testRuntime();
    const a = testApp(runtime, '1.12-1.43');
    const id = (await request(a).get('/v1.43/images/slow:1/json')).body.Id as string;
    const c = (await request(a).post('/v1.43/containers/create').send({ Image: 'slow:1' })).body.Id as string;
    await request(a).post(`/v1.43/containers/${c}/start`);
    const res = await request(a).delete(`/v1.43/images/${id}?force=1`);
    expect(res.status).toBe(409);
    expect(res.body.message).toBe(`conflict: unable to delete ${id.slice(7, 19)} (cannot be forced) - image is being used by running container ${c.slice(0, 12)}`);
    release();
  });
});
