import { test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import { testApp } from '../helpers.js';
import { describeWithPeers, dockerd, dockerImage } from '../../support/peers.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';

const IMAGE = 'busybox:local';

describeWithPeers('image, network, volume and df routes through the Docker runtime are dockerd\'s answers', [dockerd(), dockerImage(IMAGE)], () => {
  const runtime = dockerRuntime();
  const app = testApp(runtime, '1.12-1.41');
  afterAll(async () => runtime.close?.());

  test('GET /images/json and /images/{name}/json, /history: dockerd\'s shapes at the request\'s version', async () => {
    const list = await request(app).get('/v1.41/images/json');
    expect(list.status).toBe(200);
    const row = (list.body as { RepoTags: string[] | null; Id: string }[]).find((i) => i.RepoTags?.includes(IMAGE));
    expect(row).toMatchObject({ Id: expect.stringMatching(/^sha256:/), VirtualSize: expect.any(Number), SharedSize: -1 });
    const inspect = await request(app).get(`/v1.41/images/${IMAGE}/json`);
    expect(inspect.body).toMatchObject({ Id: row?.Id, GraphDriver: { Name: expect.any(String) } });
    const history = await request(app).get(`/v1.41/images/${IMAGE}/history`);
    expect(history.status).toBe(200);
    expect(history.body.length).toBeGreaterThanOrEqual(1);
    const missing = await request(app).get('/v1.41/images/dockgate-nope:1/json');
    expect(missing.status).toBe(404);
    // dockerd's own words, passed on as they are.
    expect(missing.body.message).toContain('No such image: dockgate-nope:1');
  });
  test('tag then rmi: 201, then dockerd\'s Untagged list', async () => {
    const target = `dockgate-spec-tag:${Date.now()}`;
    const [repo, tag] = target.split(':');
    expect((await request(app).post(`/v1.41/images/${IMAGE}/tag?repo=${repo}&tag=${tag}`)).status).toBe(201);
    const rmi = await request(app).delete(`/v1.41/images/${target}`);
    expect(rmi.status).toBe(200);
    expect(rmi.body).toEqual([{ Untagged: target }]);
  });
  test('save streams a tarball (application/x-tar) that load takes back', async () => {
    const save = await request(app)
      .get(`/v1.41/images/${IMAGE}/get`)
      .buffer(true)
      .parse((res, cb) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => cb(null, Buffer.concat(chunks)));
      });
    expect(save.status).toBe(200);
    expect(save.headers['content-type']).toBe('application/x-tar');
    const tar = save.body as Buffer;
    expect(tar.length).toBeGreaterThan(100_000);
    const load = await request(app).post('/v1.41/images/load?quiet=1').set('Content-Type', 'application/x-tar').send(tar);
    expect(load.status).toBe(200);
    expect(load.text).toContain(`Loaded image: ${IMAGE}`);
  });
  test('networks: dockerd\'s host and none; list without containers from 1.28', async () => {
    const list = await request(app).get('/v1.41/networks');
    expect(list.body.map((n: { Name: string }) => n.Name)).toEqual(expect.arrayContaining(['host', 'none']));
    const host = await request(app).get('/v1.41/networks/host');
    expect(host.body).toMatchObject({ Name: 'host', Driver: 'host', Scope: 'local' });
    expect((await request(app).get('/v1.41/networks/dockgate-nope')).status).toBe(404);
  });
  test('volumes: create (201), inspect, list, remove (204), then 404', async () => {
    const name = `dockgate-spec-vol-${Date.now()}`;
    const created = await request(app).post('/v1.41/volumes/create').send({ Name: name, Labels: { by: 'dockgate' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ Name: name, Driver: 'local', Labels: { by: 'dockgate' } });
    expect((await request(app).get(`/v1.41/volumes/${name}`)).body.Name).toBe(name);
    const list = await request(app).get(`/v1.41/volumes?filters=${encodeURIComponent(JSON.stringify({ name: { [name]: true } }))}`);
    expect(list.body.Volumes.map((v: { Name: string }) => v.Name)).toEqual([name]);
    expect((await request(app).delete(`/v1.41/volumes/${name}`)).status).toBe(204);
    expect((await request(app).get(`/v1.41/volumes/${name}`)).status).toBe(404);
  });
  test('system df is dockerd\'s, with BuilderSize below 1.42', async () => {
    const df = await request(app).get('/v1.41/system/df');
    expect(df.status).toBe(200);
    expect(df.body).toMatchObject({ LayersSize: expect.any(Number), Images: expect.any(Array), BuilderSize: expect.any(Number) });
  });
});
