/**
 * listenEngine over TCP: no start without a caller policy, and a Host check against DNS rebinding.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import supertest from 'supertest';
import { bearerGuard } from '../../../lib/bearer/index.js';
import { listenEngine, writeEngineAuthError, type EngineListener } from '../../../lib/engine/index.js';
import { basic, SERVICE, tokenApp } from '../../support/token-fixture.js';
import { tempSocket, testApp, testRuntime } from '../helpers.js';

/** A GET over TCP with a chosen Host header (fetch does not let a caller set it). */
function get(listener: EngineListener, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const port = Number(listener.url.split(':').pop());
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('listenEngine over TCP refuses to start without a policy for who may call', () => {
  const app = () => testApp(testRuntime().runtime);
  test('no policy: TypeError naming the three choices', async () => {
    await expect(listenEngine(app(), { port: 0 })).rejects.toThrow('listenEngine over TCP needs exactly one caller policy: "bearer" (a bearerGuard middleware), "allow" (a function of the request) or "insecure: true"');
  });
  test('two policies, insecure other than true, or a policy on a Unix socket: TypeError naming the option', async () => {
    await expect(listenEngine(app(), { port: 0, insecure: true, allow: () => true })).rejects.toThrow(TypeError);
    await expect(listenEngine(app(), { port: 0, insecure: false as never })).rejects.toThrow('"insecure" must be true');
    await expect(listenEngine(app(), { socket: tempSocket(), insecure: true })).rejects.toThrow('listenEngine option "insecure" is for TCP');
    await expect(listenEngine(app(), { port: 0, insecure: true, allowedHosts: ['a:80'] })).rejects.toThrow('"allowedHosts"');
  });
});

describe('the caller policy runs before the engine on every TCP request', () => {
  test('allow: false answers 403 {"message"}; true lets the request through', async () => {
    const l = await listenEngine(testApp(testRuntime().runtime), { port: 0, allow: (req) => req.headers['x-team'] === 'ops' });
    try {
      const refused = await get(l, '/_ping');
      expect(refused.status).toBe(403);
      expect(refused.headers['content-type']).toBe('application/json');
      expect(JSON.parse(refused.body)).toEqual({ message: 'this caller may not use the engine API' });
      expect((await get(l, '/_ping', { 'x-team': 'ops' })).status).toBe(200);
    } finally {
      await l.close();
    }
  });

  test('an allow function that throws, or an app that throws, is answered 500 {"message"} without its details, and the server serves on', async () => {
    const l = await listenEngine(() => {
      throw new Error('secret detail');
    }, { port: 0, allow: (req) => {
      if (req.headers['x-team'] === 'broken') throw new Error('secret detail');
      return true;
    } });
    try {
      for (const headers of [{ 'x-team': 'broken' }, {}] as Record<string, string>[]) {
        const failed = await get(l, '/_ping', headers);
        expect(failed.status).toBe(500);
        expect(failed.headers['content-type']).toBe('application/json');
        expect(JSON.parse(failed.body)).toEqual({ message: 'internal server error' });
      }
    } finally {
      await l.close();
    }
  });

  describe('bearer: a bearerGuard middleware', () => {
    let listener: EngineListener;
    const tokens = tokenApp({ authorize: ({ scopes }) => scopes });
    beforeAll(async () => {
      const guard = bearerGuard({ realm: 'http://127.0.0.1/token', service: SERVICE, keys: tokens.router, writeError: writeEngineAuthError });
      listener = await listenEngine(testApp(testRuntime().runtime), { port: 0, bearer: guard('engine:api:read') });
    });
    afterAll(async () => {
      await listener.close();
    });
    test('without a token: 401 with a Bearer challenge and {"message"}', async () => {
      const res = await get(listener, '/_ping');
      expect(res.status).toBe(401);
      expect(String(res.headers['www-authenticate'])).toMatch(/^Bearer realm="http:\/\/127\.0\.0\.1\/token"/);
      expect(JSON.parse(res.body)).toHaveProperty('message');
    });
    test('with a token granting engine:api:read: served', async () => {
      const issued = await supertest(tokens.app).get(`/token?service=${SERVICE}&scope=engine:api:read`).set('Authorization', basic('alice', 'wonderland'));
      const res = await get(listener, '/_ping', { Authorization: `Bearer ${issued.body.token as string}` });
      expect(res.status).toBe(200);
      expect(res.body).toBe('OK');
    });
  });
});

describe('a Host header that is not a name the engine serves gets 403 {"message"} (DNS rebinding)', () => {
  let l: EngineListener;
  beforeAll(async () => {
    l = await listenEngine(testApp(testRuntime().runtime), { port: 0, insecure: true, allowedHosts: ['docker.internal'] });
  });
  afterAll(async () => {
    await l.close();
  });
  test.each(['evil.example', 'evil.example:2375', '127.0.0.1.nip.io', 'localhost.evil.example'])('Host %s: 403', async (host) => {
    const res = await get(l, '/_ping', { Host: host });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).message).toContain('is not a name this engine serves');
  });
  test.each(['localhost', 'localhost:2375', '127.0.0.1:2375', '[::1]:2375', 'api.moby.localhost', '10.1.2.3:2375', 'docker.internal:2375', 'DOCKER.INTERNAL'])('Host %s: served', async (host) => {
    expect((await get(l, '/_ping', { Host: host })).status).toBe(200);
  });
  test('an upgrade request (attach) with a rebound name is refused the same way', async () => {
    const port = Number(l.url.split(':').pop());
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/containers/x/attach?stream=1', headers: { Host: 'evil.example', Connection: 'Upgrade', Upgrade: 'tcp' } });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('upgrade', () => resolve(101));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
