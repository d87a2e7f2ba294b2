import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { testApp, testRuntime } from '../helpers.js';

describe('POST /containers/{id}/resize?h=&w= (the CLI sends it for docker run -it)', () => {
  test('a missing or malformed size is a 400 naming h and w', async () => {
    const app = testApp(testRuntime().runtime);
    for (const query of ['', '?h=10', '?w=10', '?h=x&w=10', '?h=-1&w=10', '?h=10&w=70000']) {
      const res = await request(app).post(`/v1.28/containers/abc/resize${query}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/\b(h|w)\b/);
    }
  });
  test('an unknown container is 404', async () => {
    const res = await request(testApp(testRuntime().runtime)).post('/v1.28/containers/nope/resize?h=10&w=10');
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('No such container: nope');
  });
  test('a running container without a terminal ignores it (200), as dockerd does; a stopped one is 409', async () => {
    const { runtime, release } = testRuntime();
    const app = testApp(runtime);
    const id = (await request(app).post('/v1.28/containers/create').send({ Image: 'slow:1' })).body.Id as string;
    expect((await request(app).post(`/v1.28/containers/${id}/resize?h=10&w=10`)).status).toBe(409);
    await request(app).post(`/v1.28/containers/${id}/start`);
    expect((await request(app).post(`/v1.28/containers/${id}/resize?h=10&w=10`)).status).toBe(200);
    release();
  });
  test('a runtime without the operation answers 501 naming the feature', async () => {
    const base = testRuntime().runtime;
    const runtime: ContainerRuntime = Object.create(base, { resize: { value: undefined } });
    const res = await request(testApp(runtime)).post('/v1.28/containers/x/resize?h=10&w=10');
    expect(res.status).toBe(501);
    expect(res.body.message).toMatch(/resizing container terminals is not supported/);
  });
});
