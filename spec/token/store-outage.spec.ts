/**
 * The refresh-token store becoming unreachable: a private redis-server is stopped and restarted
 * mid-test (the shared one on 6379 is left alone).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { RedisRefreshTokenStore } from '../../lib/redis/index.js';
import { startRedisProcess, type RedisProcess } from '../interop/fixtures/redis-process.js';
import { describeWithPeers, program } from '../support/peers.js';
import { basic, passwordGrant, SERVICE, tokenApp, type TokenApp } from '../support/token-fixture.js';
import { until } from '../support/until.js';

const refreshGrant = (token: string) =>
  new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, service: SERVICE, client_id: 'spec' }).toString();


function expectUnavailable(res: request.Response): void {
  expect(res.status).toBe(503);
  expect(res.headers['retry-after']).toBe('5');
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.body.error).toBe('temporarily_unavailable');
  expect(res.body.access_token).toBeUndefined();
  expect(res.body.refresh_token).toBeUndefined();
}

describeWithPeers('token endpoint while its Redis refresh-token store is down', [program('redis-server')], () => {
  let redis: RedisProcess;
  let store: RedisRefreshTokenStore;
  let token: TokenApp;
  const connectionErrors: Error[] = [];
  let issuedBeforeOutage = '';

  beforeAll(async () => {
    redis = await startRedisProcess();
    store = new RedisRefreshTokenStore({ url: redis.url, commandTimeout: 500, onConnectionError: (e) => connectionErrors.push(e) });
    token = tokenApp({ refreshTokens: { store }, throttle: false });
    const res = await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' }));
    expect(res.status).toBe(200);
    issuedBeforeOutage = res.body.refresh_token;
    await redis.stop();
  });

  afterAll(async () => {
    await store.close();
    await redis.stop();
  });

  describe('grants that must record or read a refresh token answer 503 temporarily_unavailable with Retry-After', () => {
    test('password grant with access_type=offline issues nothing it could not record', async () => {
      const started = Date.now();
      expectUnavailable(await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' })));
      // Fail fast: no queueing until Redis returns (ioredis's default would hang here).
      expect(Date.now() - started).toBeLessThan(3_000);
    });

    test('refresh_token grant', async () => {
      expectUnavailable(await request(token.app).post('/token').type('form').send(refreshGrant(issuedBeforeOutage)));
    });

    test('GET with offline_token=true', async () => {
      expectUnavailable(await request(token.app).get('/token').query({ service: SERVICE, offline_token: 'true' }).set('Authorization', basic('alice', 'wonderland')));
    });

    test('POST /revoke (RFC 7009 §2.2.1: 503 means retry later)', async () => {
      expectUnavailable(await request(token.app).post('/revoke').type('form').send({ token: issuedBeforeOutage }));
    });

    test('the cause goes to onError, not to the client', async () => {
      await request(token.app).post('/token').type('form').send(refreshGrant(issuedBeforeOutage));
      expect(token.errors.length).toBeGreaterThan(0);
      expect(String((token.errors.at(-1) as Error).message)).toMatch(/writeable|Connection|ECONNREFUSED|timed out/i);
    });
  });

  describe('a Redis that stops answering (connection open, no replies) fails within the command timeout', () => {
    test('503 after about commandTimeout, then served again once it answers', async () => {
      await redis.start();
      expect(await until(async () => (await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' }))).status === 200, 10_000)).toBe(true);
      redis.signal('SIGSTOP');
      try {
        const started = Date.now();
        expectUnavailable(await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' })));
        expect(Date.now() - started).toBeGreaterThanOrEqual(400);
        expect(Date.now() - started).toBeLessThan(3_000);
      } finally {
        redis.signal('SIGCONT');
      }
      expect(await until(async () => (await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' }))).status === 200, 10_000)).toBe(true);
      const reported = connectionErrors.length;
      await redis.stop();
      expect(await until(async () => connectionErrors.length === reported + 1, 5_000)).toBe(true);
    });
  });

  describe('grants that need no store keep being served', () => {
    test('password grant without access_type=offline', async () => {
      const res = await request(token.app).post('/token').type('form').send(passwordGrant({ scope: 'repository:alice/app:pull' }));
      expect(res.status).toBe(200);
      expect(res.body.access_token).toEqual(expect.any(String));
      expect(res.body.refresh_token).toBeUndefined();
    });

    test('GET with Basic credentials and no offline_token', async () => {
      const res = await request(token.app).get('/token').query({ service: SERVICE }).set('Authorization', basic('alice', 'wonderland'));
      expect(res.status).toBe(200);
      expect(res.body.token).toEqual(expect.any(String));
    });
  });

  describe('the host API rejects instead of hanging', () => {
    test('revokeSubject and revokeRefreshToken reject while Redis is down', async () => {
      await expect(token.router.tokenService.revokeSubject('alice')).rejects.toThrow();
      await expect(token.router.tokenService.revokeRefreshToken(issuedBeforeOutage)).rejects.toThrow();
    });
  });

  describe('the store recovers by itself when Redis returns', () => {
    test('connection errors are reported once per outage, not per reconnect attempt, and never thrown', async () => {
      const reported = connectionErrors.length;
      expect(reported).toBeGreaterThan(0);
      // ioredis retries every 50-1000 ms: several refused attempts happen in this wait.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(connectionErrors.length).toBe(reported);
    });

    test('after a restart (empty, not persistent) new offline grants work and refresh again', async () => {
      await redis.start();
      let fresh = '';
      const recovered = await until(async () => {
        const res = await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' }));
        if (res.status !== 200) {
          expect(res.status).toBe(503);
          return false;
        }
        fresh = res.body.refresh_token;
        return true;
      }, 10_000);
      expect(recovered).toBe(true);
      const refreshed = await request(token.app).post('/token').type('form').send(refreshGrant(fresh));
      expect(refreshed.status).toBe(200);
      // The restarted server holds nothing: the token issued before the outage is gone, refused as unknown.
      const old = await request(token.app).post('/token').type('form').send(refreshGrant(issuedBeforeOutage));
      expect(old.status).toBe(400);
      expect(old.body.error).toBe('invalid_grant');
    });

    test('a later outage is reported again', async () => {
      const reported = connectionErrors.length;
      await redis.stop();
      expectUnavailable(await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' })));
      // Reported when the first reconnect attempt is refused, a moment after the socket closed.
      expect(await until(async () => connectionErrors.length === reported + 1, 5_000)).toBe(true);
      await redis.start();
      expect(await until(async () => (await request(token.app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' }))).status === 200, 10_000)).toBe(true);
    });
  });
});
