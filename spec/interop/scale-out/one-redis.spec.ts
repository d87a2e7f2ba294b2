/**
 * Scale-out: two token-service instances, two processes on two ports, sharing one real Redis
 * and one signing key, as behind a load balancer.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, jwtVerify } from 'jose';
import request from 'supertest';
import { generateSigningKey, loadSigningKey } from '../../../lib/index.js';
import { describeWithPeers, program } from '../../support/peers.js';
import { startRedisProcess, type RedisProcess } from '../fixtures/redis-process.js';
import { ensureBuiltLibrary, startTokenServerProcess, type TokenServerProcess } from '../fixtures/token-server-process.js';
import { freePort } from '../support/free-port.js';
import { until } from '../../support/until.js';

const ISSUER = 'dockgate-scale-out';
const SERVICE = 'registry.scale-out';
const key = generateSigningKey({ commonName: 'scale-out signer' });
const jwks = createLocalJWKSet({ keys: [loadSigningKey({ privateKey: key.privateKeyPem }).publicJwk] });

const login = async (server: TokenServerProcess): Promise<string> => {
  const res = await request(server.url).post('/token').type('form')
    .send({ grant_type: 'password', username: 'alice', password: 'wonderland', service: SERVICE, client_id: 'docker', access_type: 'offline' });
  expect(res.status).toBe(200);
  return res.body.refresh_token as string;
};

const refresh = (server: TokenServerProcess, token: string) =>
  request(server.url).post('/token').type('form')
    .send({ grant_type: 'refresh_token', refresh_token: token, service: SERVICE, client_id: 'docker', scope: 'repository:alice/app:pull' });


describeWithPeers('two token-service processes sharing one Redis', [program('redis-server')], () => {
  let redis: RedisProcess;
  let first: TokenServerProcess;
  let second: TokenServerProcess;

  beforeAll(async () => {
    ensureBuiltLibrary();
    redis = await startRedisProcess();
    const env = {
      REDIS_URL: redis.url,
      KEY_PREFIX: `scale-out:${randomBytes(4).toString('hex')}:`,
      SIGNING_KEY_PEM: key.privateKeyPem,
      ISSUER,
      SERVICE,
      USERS: JSON.stringify({ alice: 'wonderland' }),
      THROTTLE: JSON.stringify({ maxFailures: 3, windowSeconds: 600 }),
    };
    const ports = [await freePort()];
    while (ports.length < 2) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    [first, second] = await Promise.all([startTokenServerProcess(ports[0] as number, env), startTokenServerProcess(ports[1] as number, env)]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await redis?.stop();
  });

  describe('a refresh token works at every instance', () => {
    test('issued by the first, accepted by the second, with an access token the shared key verifies', async () => {
      const token = await login(first);
      const res = await refresh(second, token);
      expect(res.status).toBe(200);
      const { payload } = await jwtVerify(res.body.access_token, jwks, { issuer: ISSUER, audience: SERVICE });
      expect(payload).toMatchObject({ sub: 'alice', access: [{ type: 'repository', name: 'alice/app', actions: ['pull'] }] });
    });
  });

  describe('a revocation takes effect at every instance at once', () => {
    test('revoked at the second (POST /revoke), refused by the first', async () => {
      const token = await login(first);
      expect((await refresh(first, token)).status).toBe(200);
      expect((await request(second.url).post('/revoke').type('form').send({ token, token_type_hint: 'refresh_token' })).status).toBe(200);
      const refused = await refresh(first, token);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_grant');
    });
  });

  describe('restarting either instance loses no token', () => {
    test('tokens from both instances keep working across a restart of the first, then of the second', async () => {
      const tokens = [await login(first), await login(second)];
      for (const server of [first, second]) {
        expect(await server.stop()).toBe(0);
        const other = server === first ? second : first;
        // While one is down the other serves every token.
        for (const t of tokens) expect((await refresh(other, t)).status).toBe(200);
        await server.start();
        for (const t of tokens) expect((await refresh(server, t)).status).toBe(200);
      }
    });
  });

  describe('failed logins split between the two instances are throttled at the configured limit, not twice it', () => {
    test('3 wrong passwords alternating between instances, then both answer 429 even to the right password', async () => {
      const from = (server: TokenServerProcess, password: string) => request(server.url).post('/token').type('form').set('X-Forwarded-For', '203.0.113.50')
        .send({ grant_type: 'password', username: 'alice', password, service: SERVICE, client_id: 'docker' });
      for (let i = 0; i < 3; i++) expect((await from(i % 2 ? second : first, 'guess')).status).toBe(400);
      for (const server of [first, second]) {
        const res = await from(server, 'wonderland');
        expect(res.status).toBe(429);
        expect(res.body.error).toBe('slow_down');
      }
    });
  });

  describe('a Redis outage: both processes answer 503, never crash, and recover by themselves', () => {
    test('503 temporarily_unavailable with Retry-After while Redis is down; service again after it returns', async () => {
      await redis.stop();
      for (const server of [first, second]) {
        const down = await request(server.url).post('/token').type('form')
          .send({ grant_type: 'password', username: 'alice', password: 'wonderland', service: SERVICE, client_id: 'docker', access_type: 'offline' });
        expect(down.status).toBe(503);
        expect(down.headers['retry-after']).toBe('5');
        expect(down.body.error).toBe('temporarily_unavailable');
        expect(down.body.refresh_token).toBeUndefined();
        // The throttle fails open to per-instance limits: a login without a refresh token works,
        // a wrong password is still "invalid" (never a 500), until this instance's own limit.
        const online = await request(server.url).post('/token').type('form')
          .send({ grant_type: 'password', username: 'alice', password: 'wonderland', service: SERVICE, client_id: 'docker' });
        expect(online.status).toBe(200);
        const wrong = await request(server.url).post('/token').type('form')
          .send({ grant_type: 'password', username: 'alice', password: 'guess', service: SERVICE, client_id: 'docker' });
        expect(wrong.status).toBe(400);
        expect(wrong.body.error).toBe('invalid_grant');
      }
      // ioredis keeps retrying meanwhile; an unhandled 'error' event would have killed the process.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(first.running() && second.running()).toBe(true);
      await redis.start();
      for (const server of [first, second]) {
        expect(await until(async () => (await request(server.url).post('/token').type('form')
          .send({ grant_type: 'password', username: 'alice', password: 'wonderland', service: SERVICE, client_id: 'docker', access_type: 'offline' })).status === 200, 10_000)).toBe(true);
      }
      const token = await login(second);
      expect((await refresh(first, token)).status).toBe(200);
      expect(first.stderr()).not.toContain('wonderland');
    });
  });
});
