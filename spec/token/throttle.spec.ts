import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { LoginThrottle } from '../../lib/token/throttle/login-throttle.js';
import { basic, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';

describe('LoginThrottle counts failures per account and address in fixed windows', () => {
  test('the limit-th failure locks the account at that address until the window ends', () => {
    const t = new LoginThrottle({ maxFailures: 3, windowSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      expect(t.retryAfter('alice', '1.1.1.1', 1000)).toBe(0);
      t.fail('alice', '1.1.1.1', 1000);
    }
    expect(t.retryAfter('alice', '1.1.1.1', 1000)).toBe(60);
    expect(t.retryAfter('alice', '1.1.1.1', 31_000)).toBe(30);
    expect(t.retryAfter('alice', '1.1.1.1', 61_000)).toBe(0);
  });
  test('another address or another account is not locked out', () => {
    const t = new LoginThrottle({ maxFailures: 1 });
    t.fail('alice', '1.1.1.1', 0);
    expect(t.retryAfter('alice', '2.2.2.2', 0)).toBe(0);
    expect(t.retryAfter('bob', '1.1.1.1', 0)).toBe(0);
  });
  test('one address trying many accounts hits the per-address limit', () => {
    const t = new LoginThrottle({ maxFailures: 100, maxFailuresPerAddress: 3 });
    for (const user of ['a', 'b', 'c']) t.fail(user, '9.9.9.9', 0);
    expect(t.retryAfter('d', '9.9.9.9', 0)).toBeGreaterThan(0);
  });
  test('a success clears the account window', () => {
    const t = new LoginThrottle({ maxFailures: 2 });
    t.fail('alice', '1.1.1.1', 0);
    t.succeed('alice', '1.1.1.1');
    t.fail('alice', '1.1.1.1', 0);
    expect(t.retryAfter('alice', '1.1.1.1', 0)).toBe(0);
  });
  test('options are validated', () => {
    expect(() => new LoginThrottle({ maxFailures: 0 })).toThrow(/throttle.maxFailures/);
    expect(() => new LoginThrottle({ windowSeconds: 1.5 })).toThrow(/throttle.windowSeconds/);
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

describe('throttle keys stay small whatever the username', () => {
  test('a 4096-character username is throttled like any other', () => {
    const t = new LoginThrottle({ maxFailures: 1 });
    const long = 'u'.repeat(4096);
    t.fail(long, '1.1.1.1', 0);
    expect(t.retryAfter(long, '1.1.1.1', 0)).toBeGreaterThan(0);
    expect(t.retryAfter(`${'u'.repeat(4095)}v`, '1.1.1.1', 0)).toBe(0);
  });
});
