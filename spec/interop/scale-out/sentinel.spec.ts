/**
 * Scale-out on Redis Sentinel: a real master (7110), replica (7111) and three sentinels
 * (27110-27112, `redis-server --sentinel`) started here, and two token-service processes whose
 * stores get a Sentinel-configured ioredis client, as behind a load balancer.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { generateSigningKey } from '../../../lib/index.js';
import { failFastRedisOptions, RedisRefreshTokenStore } from '../../../lib/redis/index.js';
import { describeWithPeers, program } from '../../support/peers.js';
import { until } from '../../support/until.js';
import { startRedisSentinel, type RedisSentinelSetup } from '../fixtures/redis-topologies.js';
import { keepRefreshing, login, passwordFrom, refresh, revoke, SERVICE, USERS } from '../fixtures/scale-out-client.js';
import { ensureBuiltLibrary, startTokenServerProcess, type TokenServerProcess } from '../fixtures/token-server-process.js';

const key = generateSigningKey({ commonName: 'scale-out sentinel signer' });
const PREFIX = `scale-out:${randomBytes(4).toString('hex')}:`;
const LIMIT = 3;

describeWithPeers('two token-service processes on Redis Sentinel (one master, one replica, three sentinels)', [program('redis-server'), program('redis-cli')], () => {
  let setup: RedisSentinelSetup;
  let first: TokenServerProcess;
  let second: TokenServerProcess;
  let adminClient: Redis;
  let admin: RedisRefreshTokenStore;

  beforeAll(async () => {
    ensureBuiltLibrary();
    setup = await startRedisSentinel(7110, 7111, [27110, 27111, 27112]);
    const env = {
      REDIS_SENTINELS: setup.sentinels.map((s) => `${s.host}:${s.port}`).join(','), REDIS_SENTINEL_NAME: setup.name,
      KEY_PREFIX: PREFIX, SIGNING_KEY_PEM: key.privateKeyPem, ISSUER: 'dockgate-scale-out', SERVICE, USERS: JSON.stringify(USERS),
      THROTTLE: JSON.stringify({ maxFailures: LIMIT, windowSeconds: 600 }),
    };
    [first, second] = await Promise.all([startTokenServerProcess(7192, env), startTokenServerProcess(7193, env)]);
    adminClient = new Redis({ sentinels: setup.sentinels, name: setup.name, ...failFastRedisOptions(1000) });
    adminClient.on('error', () => {});
    admin = new RedisRefreshTokenStore({ client: adminClient, keyPrefix: PREFIX });
  }, 90_000);

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await adminClient?.quit().catch(() => adminClient.disconnect());
    await setup?.stop();
  });

  describe('a refresh token issued by one instance is used, then revoked, through the other', () => {
    test('issued by the first, refreshed and revoked at the second, refused by the first', async () => {
      const token = await login(first);
      expect((await refresh(second, token)).status).toBe(200);
      expect((await revoke(second, token)).status).toBe(200);
      const refused = await refresh(first, token);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_grant');
    });
  });

  describe('revokeSubject reaches every token of the subject, from both instances', () => {
    test('10 tokens of bob issued at both instances, one revokeSubject through a Sentinel-configured client revokes them all', async () => {
      const tokens = await Promise.all(Array.from({ length: 10 }, (_, i) => login(i % 2 ? first : second, 'bob')));
      const alices = await login(first);
      expect(await admin.revokeSubject('bob')).toBe(10);
      for (const token of tokens) expect((await refresh(first, token, 'bob')).status).toBe(400);
      expect((await refresh(second, alices)).status).toBe(200);
    });
  });

  describe('failed logins split between the two instances are throttled at the configured limit, not twice it', () => {
    test(`wrong passwords alternating between instances: ${LIMIT} are judged, then both answer 429`, async () => {
      const address = '192.0.2.44';
      for (let i = 0; i < LIMIT; i++) expect((await passwordFrom(i % 2 ? second : first, address, 'alice', 'guess')).status).toBe(400);
      for (const server of [first, second]) expect((await passwordFrom(server, address, 'alice', 'wonderland')).status).toBe(429);
    });
  });

  describe('the master killed and the replica promoted by the sentinels: tokens saved before still work, no request answers 500', () => {
    test('refreshes during the failover answer 200 or 503 with Retry-After (never 500), and every token works at both instances after it', async () => {
      const tokens = await Promise.all(Array.from({ length: 6 }, (_, i) => login(i % 2 ? first : second)));
      await setup.synced();
      const before = await setup.master();
      const traffic = keepRefreshing([first, second], tokens);
      const promoted = await setup.failOver();
      expect(promoted).not.toBe(before);
      const recovered = await until(async () => {
        for (const token of tokens) {
          for (const server of [first, second]) if ((await refresh(server, token)).status !== 200) return false;
        }
        return true;
      }, 20_000);
      const statuses = await traffic.stop();
      expect(recovered).toBe(true);
      expect(statuses.filter((s) => s !== '200' && s !== '503 5 temporarily_unavailable')).toEqual([]);
      console.log(`during the failover: ${statuses.length} refreshes, ${statuses.filter((s) => s !== '200').length} answered 503`);
      expect(first.running() && second.running()).toBe(true);
      // Writes go to the new master: a new login and the throttle work at once.
      const fresh = await login(second);
      expect((await refresh(first, fresh)).status).toBe(200);
      expect((await passwordFrom(first, '192.0.2.45', 'alice', 'guess')).status).toBe(400);
    }, 60_000);
  });
});
