import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import keySlot from 'cluster-key-slot';
import { Redis } from 'ioredis';
import { RedisThrottleStore } from '../../lib/redis/index.js';
import { LoginThrottle } from '../../lib/token/throttle/login-throttle.js';
import { describeWithPeers, redis } from '../support/peers.js';

const URL = 'redis://127.0.0.1:6379';

describeWithPeers('RedisThrottleStore: one set of login windows for every instance', [redis()], () => {
  const prefix = `spec-throttle:${randomBytes(6).toString('hex')}:`;
  let stores: RedisThrottleStore[];
  let inspect: Redis;

  beforeAll(() => {
    stores = [new RedisThrottleStore({ url: URL, keyPrefix: prefix }), new RedisThrottleStore({ url: URL, keyPrefix: prefix })];
    inspect = new Redis(URL);
  });

  afterAll(async () => {
    const keys = await inspect.keys(`${prefix}*`);
    if (keys.length > 0) await inspect.del(...keys);
    await Promise.all([...stores.map((s) => s.close()), inspect.quit()]);
  });

  describe('the limits hold across instances sharing the store', () => {
    test('failures counted at two instances add up: the limit holds across them, not per instance', async () => {
      const [a, b] = stores.map((store) => new LoginThrottle({ maxFailures: 4, windowSeconds: 60, store })) as [LoginThrottle, LoginThrottle];
      for (let i = 0; i < 4; i++) {
        const t = i % 2 ? b : a;
        expect(await t.check('alice', '10.0.0.1')).toBe(0);
        expect(await t.failed('alice', '10.0.0.1')).toBe(0);
      }
      expect(await a.check('alice', '10.0.0.1')).toBeGreaterThan(55);
      expect(await b.check('alice', '10.0.0.1')).toBeGreaterThan(55);
      expect(await b.check('alice', '10.0.0.2')).toBe(0);
    });

    test('a burst of failures at both instances: exactly the limit of them get 0 (answered "invalid"), the rest a wait', async () => {
      const throttles = stores.map((store) => new LoginThrottle({ maxFailures: 5, store }));
      const waits = await Promise.all(Array.from({ length: 16 }, (_, i) => (throttles[i % 2] as LoginThrottle).failed('bob', '10.0.0.3')));
      expect(waits.filter((w) => w === 0)).toHaveLength(5);
    });
  });

  describe('a success clears the account window everywhere', () => {
    test('a success at one instance clears the account window for the other', async () => {
      const [a, b] = stores.map((store) => new LoginThrottle({ maxFailures: 2, store })) as [LoginThrottle, LoginThrottle];
      await a.failed('carol', '10.0.0.4');
      expect(await b.succeeded('carol', '10.0.0.4')).toBe(0);
      await a.failed('carol', '10.0.0.4');
      expect(await b.check('carol', '10.0.0.4')).toBe(0);
    });
  });

  describe('the account-wide window is shared too, under the account\'s own hash tag', () => {
    test('failures of one account from many addresses at two instances add up to the account limit', async () => {
      const [a, b] = stores.map((store) => new LoginThrottle({ maxFailures: 5, maxFailuresPerAccount: 6, accountWindowSeconds: 300, store })) as [LoginThrottle, LoginThrottle];
      for (let i = 0; i < 6; i++) expect(await (i % 2 ? b : a).failed('erin', `10.1.0.${i}`)).toBe(0);
      expect(await a.check('erin', '10.1.9.9')).toBeGreaterThan(295);
      expect(await b.succeeded('erin', '10.1.9.8')).toBeGreaterThan(295);
      expect(await b.check('frank', '10.1.0.1')).toBe(0);
      const key = `${prefix}{u:erin}:u`;
      expect(await inspect.get(key)).toBe('6');
      expect(await inspect.pttl(key)).toBeGreaterThan(295_000);
    });
    test('a parallel burst from many addresses: exactly the account limit of them get 0', async () => {
      const throttles = stores.map((store) => new LoginThrottle({ maxFailures: 5, maxFailuresPerAccount: 7, store }));
      const waits = await Promise.all(Array.from({ length: 20 }, (_, i) => (throttles[i % 2] as LoginThrottle).failed('gina', `10.2.0.${i}`)));
      expect(waits.filter((w) => w === 0)).toHaveLength(7);
    });
  });

  describe('keys carry the address as hash tag and expire with their window', () => {
    test('windows are keys with the address as hash tag (one cluster slot per address) that expire with the window', async () => {
      const t = new LoginThrottle({ maxFailures: 3, windowSeconds: 120, store: stores[0] });
      await t.failed('dave', '10.0.0.5');
      const keys = (await inspect.keys(`${prefix}*10.0.0.5*`)).sort();
      expect(await inspect.exists(`${prefix}{u:dave}:u`)).toBe(1);
      expect(keys).toEqual([`${prefix}{10.0.0.5}:a:dave`, `${prefix}{10.0.0.5}:i`]);
      expect(keySlot(keys[0] as string)).toBe(keySlot(keys[1] as string));
      for (const k of keys) expect(await inspect.pttl(k)).toBeGreaterThan(115_000);
    });
  });

  test('options are validated', () => {
    expect(() => new RedisThrottleStore({} as never)).toThrow(/exactly one of "url", "cluster" and "client"/);
    expect(() => new RedisThrottleStore({ url: URL, keyPrefix: '{x}' })).toThrow(/"keyPrefix" must not hold/);
  });
});
