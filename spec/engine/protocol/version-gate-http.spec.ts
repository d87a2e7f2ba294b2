import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import express from 'express';
import { engineRouter } from '../../../lib/engine/index.js';
import { testApp, testRuntime } from '../helpers.js';

const app = testApp(testRuntime().runtime);

function expectEngineHeaders(res: request.Response, apiVersion = '1.28'): void {
  expect(res.headers['api-version']).toBe(apiVersion);
  expect(res.headers['server']).toMatch(/^Dockgate\/0\.1\.0 \(linux\)$/);
  expect(res.headers['ostype']).toBe('linux');
  expect(res.headers['docker-experimental']).toBe('false');
}

describe('rule 1: the API version is the first path segment; none means the newest', () => {
  test('/v1.24/version and /version are both served', async () => {
    const versioned = await request(app).get('/v1.24/version');
    const bare = await request(app).get('/version');
    expect(versioned.status).toBe(200);
    expect(bare.status).toBe(200);
    expect(bare.body.ApiVersion).toBe('1.28');
  });
  test('behaviour follows the requested version: Platform/Components only from 1.35', async () => {
    const wide = testApp(testRuntime().runtime, '1.12-1.41');
    expect((await request(wide).get('/v1.34/version')).body.Components).toBeUndefined();
    expect((await request(wide).get('/v1.35/version')).body.Components[0].Details).toMatchObject({ ApiVersion: '1.41', MinAPIVersion: '1.12' });
  });
});

describe('rule 3: out of range is a 400 with dockerd\'s exact messages', () => {
  test('too old, below 1.24: plain text, as dockerd answers old clients', async () => {
    const res = await request(app).get('/v1.11/version');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('client version 1.11 is too old. Minimum supported API version is 1.12, please upgrade your client to a newer version\n');
    expectEngineHeaders(res);
  });
  test('too new: JSON {"message"} with Content-Type exactly application/json', async () => {
    const res = await request(app).get('/v1.29/containers/json');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).toBe('{"message":"client version 1.29 is too new. Maximum supported API version is 1.28"}\n');
    expectEngineHeaders(res);
  });
  test('"/v./" compares as 0 and is too old', async () => {
    const res = await request(app).get('/v./version');
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^client version \. is too old/);
  });
  test('the gate applies only to routes that exist: unknown paths are 404 at any version', async () => {
    const res = await request(app).get('/v1.11/nothing');
    expect(res.status).toBe(404);
    // dockerd's versioned catch-all knows the version: below 1.24 the 404 is plain text.
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('page not found\n');
  });
});

describe('rule 3: a malformed prefix matches no route (404 page not found)', () => {
  for (const path of ['/vabc/version', '/1.28/version', '/v1.28x/version', '/nothing', '/v1.28/nothing', '/v1.29/nothing']) {
    test(`${path} → 404 JSON page not found, with engine headers`, async () => {
      const res = await request(app).get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.text).toBe('{"message":"page not found"}\n');
      expectEngineHeaders(res);
    });
  }
  test('a wrong method on a known path is 404 too, not 405', async () => {
    const res = await request(app).put('/v1.28/containers/json');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'page not found' });
  });
});

describe('rule 3: /_ping and /version let clients negotiate', () => {
  test('HEAD /_ping: 200, no body, zero length, no-cache headers, engine headers', async () => {
    const res = await request(app).head('/_ping');
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe('0');
    expect(res.headers['cache-control']).toBe('no-cache, no-store, must-revalidate');
    expect(res.headers['pragma']).toBe('no-cache');
    expectEngineHeaders(res);
  });
  test('GET /_ping: "OK"', async () => {
    const res = await request(app).get('/v1.28/_ping');
    expect(res.status).toBe(200);
    expect(res.text).toBe('OK');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  });
  test('/version reports the maximum as ApiVersion and the minimum as MinAPIVersion', async () => {
    const res = await request(app).get('/version');
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toMatchObject({ ApiVersion: '1.28', MinAPIVersion: '1.12', Version: '0.1.0', Os: 'linux' });
  });
  test('OPTIONS on any path answers 200 like dockerd', async () => {
    expect((await request(app).options('/v1.28/containers/json')).status).toBe(200);
  });
});

describe('rule 4: ranges named by engine release', () => {
  test('{ release: "17.03" } serves up to 1.27', async () => {
    const a = testApp(testRuntime().runtime, { release: '17.03' });
    expect((await request(a).get('/v1.27/_ping')).status).toBe(200);
    const res = await request(a).get('/v1.28/_ping');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('client version 1.28 is too new. Maximum supported API version is 1.27');
    expect(res.headers['api-version']).toBe('1.27');
  });
  test('invalid ranges and runtimes fail at construction', () => {
    const { runtime } = testRuntime();
    expect(() => engineRouter(runtime, { release: '99.1' })).toThrow(TypeError);
    expect(() => engineRouter(runtime, { min: '1.41', max: '1.12' })).toThrow(/must not be above/);
    expect(() => engineRouter({} as never)).toThrow(/lacks the ContainerRuntime method create/);
    expect(() => engineRouter(runtime, undefined, { maxBodyBytes: 1 })).toThrow(/maxBodyBytes/);
  });
  test('mounted under a prefix, the router keeps its own paths', async () => {
    const host = express();
    host.use('/docker', engineRouter(testRuntime().runtime));
    expect((await request(host).get('/docker/v1.28/_ping')).text).toBe('OK');
  });
});
