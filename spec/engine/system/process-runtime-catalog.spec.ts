import { describe, test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import { statSync, existsSync } from 'node:fs';
import { testApp } from '../helpers.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';

const BUSYBOX = '/bin/busybox';
const runtime = processRuntime({ images: { 'busybox:local': { program: BUSYBOX }, 'alpine:*': { program: BUSYBOX } } });
const app = testApp(runtime, '1.12-1.43');
afterAll(async () => runtime.close?.());

(existsSync(BUSYBOX) ? describe : describe.skip)('the process runtime lists its images as the host programs they run', () => {
  test('an exact entry and a name:* entry (as name:latest); Size and Created are the program\'s', async () => {
    const res = await request(app).get('/v1.43/images/json');
    expect(res.body.map((i: { RepoTags: string[] }) => i.RepoTags[0]).sort()).toEqual(['alpine:latest', 'busybox:local']);
    const st = statSync(BUSYBOX);
    expect(res.body[0]).toMatchObject({ Size: st.size, Created: Math.floor(st.mtimeMs / 1000) });
  });
  test('any tag of a name:* entry inspects, and joins the list once used', async () => {
    expect((await request(app).get('/v1.43/images/alpine:3.19/json')).body.RepoTags).toEqual(['alpine:3.19']);
    expect((await request(app).get('/v1.43/images/json')).body).toHaveLength(3);
  });
});

(existsSync(BUSYBOX) ? describe : describe.skip)('the process runtime has the `host` network, and its running containers are in it', () => {
  test('network ls shows host only; inspect lists a running container', async () => {
    expect((await request(app).get('/v1.43/networks')).body.map((n: { Name: string }) => n.Name)).toEqual(['host']);
    const created = await request(app).post('/v1.43/containers/create?name=net-sleeper').send({ Image: 'busybox:local', Cmd: ['sleep', '5'] });
    await request(app).post(`/v1.43/containers/${created.body.Id}/start`);
    const host = await request(app).get('/v1.43/networks/host');
    expect(host.body.Containers).toEqual({ [created.body.Id]: expect.objectContaining({ Name: 'net-sleeper' }) });
    // From API 1.28 the list carries no containers; 1.27 still did.
    expect((await request(app).get('/v1.43/networks')).body[0].Containers).toEqual({});
    expect(Object.keys((await request(app).get('/v1.27/networks')).body[0].Containers)).toEqual([created.body.Id]);
    await request(app).delete(`/v1.43/containers/${created.body.Id}?force=1`);
  });
});
