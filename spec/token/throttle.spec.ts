import { describe, expect, test } from '@jest/globals';
import { createServer } from 'node:net';
import request from 'supertest';
import { LoginThrottle } from '../../lib/token/throttle/index.js';
import { RedisThrottleStore } from '../../lib/redis/index.js';
import { basic, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';

describe('a third, slower and bigger window counts an account\'s failures across all addresses', () => {
  test('defaults: 100 failures per account per hour (beside 5 per account and address, 50 per address, per 15 minutes)', async () => {
    const t = new LoginThrottle();
    for (let i = 0; i < 100; i++) expect(await t.failed('alice', `10.0.${Math.floor(i / 4)}.${i % 4}`, 0)).toBe(0);
    expect(await t.check('alice', '192.0.2.1', 0)).toBe(3600);
    expect(await t.check('alice', '192.0.2.1', 3_600_000)).toBe(0);
    expect(await t.check('bob', '10.0.0.1', 0)).toBe(0);
  });
  test('guesses from rotating addresses (a spoofed X-Forwarded-For) meet the account limit; the right password then waits too', async () => {
    const t = new LoginThrottle({ maxFailures: 5, maxFailuresPerAccount: 10, accountWindowSeconds: 600 });
    for (let i = 0; i < 10; i++) expect(await t.failed('alice', `203.0.113.${i}`, 0)).toBe(0);
    expect(await t.failed('alice', '203.0.113.99', 0)).toBe(600);
    expect(await t.succeeded('alice', '198.51.100.7', 0)).toBe(600);
  });
  test('through the token endpoint: the 11th address gets 429 for that account', async () => {
    const { app } = tokenApp({ throttle: { maxFailuresPerAccount: 10 } });
    const app2 = app.set('trust proxy', '127.0.0.1');
    for (let i = 0; i < 10; i++) {
      const res = await request(app2).get(`/token?service=${SERVICE}`).set('X-Forwarded-For', `203.0.113.${i}`).set('Authorization', basic('alice', 'wrong'));
      expect(res.status).toBe(401);
    }
    const res = await request(app2).get(`/token?service=${SERVICE}`).set('X-Forwarded-For', '203.0.113.200').set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(3500);
  });
  test('its options are validated', () => {
    expect(() => new LoginThrottle({ maxFailuresPerAccount: 0 })).toThrow('"throttle.maxFailuresPerAccount" must be a positive integer');
    expect(() => new LoginThrottle({ accountWindowSeconds: 1.5 })).toThrow('"throttle.accountWindowSeconds" must be a positive integer');
  });
});

describe('LoginThrottle counts failures per account and address in fixed windows', () => {
  test('the limit-th failure locks the account at that address until the window ends', async () => {
    const t = new LoginThrottle({ maxFailures: 3, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      expect(await t.check('alice', '1.1.1.1', 1000)).toBe(0);
      expect(await t.failed('alice', '1.1.1.1', 1000)).toBe(0);
    }
    expect(await t.check('alice', '1.1.1.1', 1000)).toBe(60);
    expect(await t.check('alice', '1.1.1.1', 31_000)).toBe(30);
    expect(await t.check('alice', '1.1.1.1', 61_000)).toBe(0);
  });
  test('another address or another account is not locked out', async () => {
    const t = new LoginThrottle({ maxFailures: 1 });
    await t.failed('alice', '1.1.1.1', 0);
    expect(await t.check('alice', '2.2.2.2', 0)).toBe(0);
    expect(await t.check('bob', '1.1.1.1', 0)).toBe(0);
  });
  test('one address trying many accounts hits the per-address limit', async () => {
    const t = new LoginThrottle({ maxFailures: 100, maxFailuresPerAddress: 3 });
    for (const user of ['a', 'b', 'c']) await t.failed(user, '9.9.9.9', 0);
    expect(await t.check('d', '9.9.9.9', 0)).toBeGreaterThan(0);
  });
  test('a success clears the account window', async () => {
    const t = new LoginThrottle({ maxFailures: 2 });
    await t.failed('alice', '1.1.1.1', 0);
    expect(await t.succeeded('alice', '1.1.1.1', 0)).toBe(0);
    await t.failed('alice', '1.1.1.1', 0);
    expect(await t.check('alice', '1.1.1.1', 0)).toBe(0);
  });
  test('a failure past the limit, and a success once the limit is reached, are told to wait', async () => {
    const t = new LoginThrottle({ maxFailures: 2, windowSeconds: 60 });
    expect(await t.failed('alice', '1.1.1.1', 0)).toBe(0);
    expect(await t.failed('alice', '1.1.1.1', 0)).toBe(0);
    expect(await t.failed('alice', '1.1.1.1', 0)).toBe(60);
    expect(await t.succeeded('alice', '1.1.1.1', 0)).toBe(60);
  });
  test('options are validated', () => {
    expect(() => new LoginThrottle({ maxFailures: 0 })).toThrow(/throttle.maxFailures/);
    expect(() => new LoginThrottle({ windowSeconds: 1.5 })).toThrow(/throttle.windowSeconds/);
    expect(() => new LoginThrottle({ maxKeys: -1 })).toThrow(/throttle.maxKeys/);
    expect(() => new LoginThrottle({ store: {} as never })).toThrow(/"throttle.store" must implement check\(\)/);
  });
});

describe('the password grant resists brute force: 429 with Retry-After (RFC 6749 §4.3.2)', () => {
  test('POST: after the limit even the right password waits', async () => {
    const { app, audit } = tokenApp({ throttle: { maxFailures: 2, windowSeconds: 120 } });
    for (let i = 0; i < 2; i++) {
      expect((await request(app).post('/token').type('form').send(passwordGrant({ password: 'bad' }))).status).toBe(400);
    }
    const res = await request(app).post('/token').type('form').send(passwordGrant());
    expect(res.status).toBe(429);
    expect(res.body.error).toBe('slow_down');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(100);
    expect(res.body.errors[0].code).toBe('TOOMANYREQUESTS');
    expect(audit.at(-1)).toMatchObject({ type: 'login.throttled', account: 'alice' });
  });
  test('GET with Basic is throttled too', async () => {
    const { app } = tokenApp({ throttle: { maxFailures: 1 } });
    await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'bad'));
    const res = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBeDefined();
  });
  test('throttle: false turns it off', async () => {
    const { app } = tokenApp({ throttle: false });
    for (let i = 0; i < 8; i++) await request(app).post('/token').type('form').send(passwordGrant({ password: 'bad' }));
    expect((await request(app).post('/token').type('form').send(passwordGrant())).status).toBe(200);
  });
});

describe('parallel guesses cannot outrun the limit: each verdict is checked against the counts after the password check', () => {
  test('10 wrong passwords at once with a limit of 3: 3 are judged (400), 7 are throttled (429)', async () => {
    const { app } = tokenApp({ throttle: { maxFailures: 3 } });
    const statuses = await Promise.all(Array.from({ length: 10 }, () => request(app).post('/token').type('form').send(passwordGrant({ password: 'bad' })).then((r) => r.status)));
    expect(statuses.filter((s) => s === 400)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });
  test('parallel right passwords are not held back by each other', async () => {
    const { app } = tokenApp({ throttle: { maxFailures: 2 } });
    const statuses = await Promise.all(Array.from({ length: 8 }, () => request(app).post('/token').type('form').send(passwordGrant()).then((r) => r.status)));
    expect(statuses).toEqual(Array(8).fill(200));
  });
  test('a login whose authenticator throws is not counted as a failure', async () => {
    const { app } = tokenApp({
      throttle: { maxFailures: 1 },
      authenticate: async ({ password }) => {
        if (password === 'boom') throw new Error('directory down');
        return password === 'wonderland' ? { subject: 'alice' } : null;
      },
    });
    expect((await request(app).post('/token').type('form').send(passwordGrant({ password: 'boom' }))).status).toBe(500);
    expect((await request(app).post('/token').type('form').send(passwordGrant())).status).toBe(200);
  });
});

describe('throttle keys stay small whatever the username', () => {
  test('a 4096-character username is throttled like any other', async () => {
    const t = new LoginThrottle({ maxFailures: 1 });
    const long = 'u'.repeat(4096);
    await t.failed(long, '1.1.1.1', 0);
    expect(await t.check(long, '1.1.1.1', 0)).toBeGreaterThan(0);
    expect(await t.check(`${'u'.repeat(4095)}v`, '1.1.1.1', 0)).toBe(0);
  });
});

describe('a shared throttle store that is unreachable fails open to per-instance limits', () => {
  test('right passwords still log in, wrong ones are throttled at the limit by this instance, never a 500; the outage is reported once', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as { port: number };
        probe.close(() => resolve(p));
      });
    });
    const store = new RedisThrottleStore({ url: `redis://127.0.0.1:${port}`, commandTimeout: 300, onConnectionError: () => {} });
    try {
      const { app, errors } = tokenApp({ throttle: { maxFailures: 2, store } });
      const started = Date.now();
      expect((await request(app).post('/token').type('form').send(passwordGrant())).status).toBe(200);
      for (let i = 0; i < 2; i++) {
        const res = await request(app).post('/token').type('form').send(passwordGrant({ password: 'bad' }));
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_grant');
      }
      const throttled = await request(app).post('/token').type('form').send(passwordGrant());
      expect(throttled.status).toBe(429);
      expect(throttled.headers['retry-after']).toBeDefined();
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(errors).toHaveLength(1);
      expect(String((errors[0] as Error).message)).toMatch(/login throttle: the shared store is unreachable/);
    } finally {
      await store.close();
    }
  });
});
