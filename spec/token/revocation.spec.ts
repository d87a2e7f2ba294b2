/**
 * RFC 7009 token revocation (`POST /revoke`) and the host's revocation API
 * (`tokenService.revokeRefreshToken`, `tokenService.revokeSubject`).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { RedisRefreshTokenStore } from '../../lib/redis/index.js';
import { describeWithPeers, redis } from '../support/peers.js';
import { passwordGrant, SERVICE, tokenApp, type TokenApp } from '../support/token-fixture.js';

const refreshGrant = (token: string) =>
  new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, service: SERVICE, client_id: 'spec' }).toString();

async function login(app: TokenApp['app'], user = 'alice', password = 'wonderland'): Promise<{ refresh: string; access: string }> {
  const res = await request(app).post('/token').type('form').send(passwordGrant({ username: user, password, access_type: 'offline' }));
  expect(res.status).toBe(200);
  return { refresh: res.body.refresh_token, access: res.body.access_token };
}

async function refreshStatus(app: TokenApp['app'], token: string): Promise<number> {
  return (await request(app).post('/token').type('form').send(refreshGrant(token))).status;
}

describe('RFC 7009 §2.1: POST /revoke takes a form with "token"', () => {
  const { app } = tokenApp({ throttle: false });

  test('a missing token is 400 invalid_request', async () => {
    const res = await request(app).post('/revoke').type('form').send({ token_type_hint: 'refresh_token' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('a token given twice is 400 invalid_request', async () => {
    const res = await request(app).post('/revoke').type('form').send('token=a&token=b');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('an oversized token is 400 invalid_request, not a store lookup', async () => {
    const res = await request(app).post('/revoke').type('form').send({ token: 'x'.repeat(5000) });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  test('GET is 405 with Allow: POST', async () => {
    const res = await request(app).get('/revoke').query({ token: 'a' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });
});

describe('RFC 7009 §2.2: a revoked refresh token is refused at once; the answer is 200 either way', () => {
  let token: TokenApp;
  beforeAll(() => {
    token = tokenApp({ throttle: false });
  });

  test('revoking a live refresh token answers 200 with an empty body, and the refresh grant then refuses it', async () => {
    const { refresh } = await login(token.app);
    expect(await refreshStatus(token.app, refresh)).toBe(200);
    const res = await request(token.app).post('/revoke').type('form').send({ token: refresh, token_type_hint: 'refresh_token' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers['cache-control']).toBe('no-store');
    const refused = await request(token.app).post('/token').type('form').send(refreshGrant(refresh));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
  });

  test('unknown and already-revoked tokens get 200 too ("invalid tokens do not cause an error response")', async () => {
    const { refresh } = await login(token.app);
    for (const t of [refresh, refresh, 'dgr_never-issued', 'not even a token']) {
      expect((await request(token.app).post('/revoke').type('form').send({ token: t })).status).toBe(200);
    }
  });

  test('only the presented token is revoked: the same account\'s other tokens keep working', async () => {
    const first = await login(token.app);
    const second = await login(token.app);
    await request(token.app).post('/revoke').type('form').send({ token: first.refresh });
    expect(await refreshStatus(token.app, first.refresh)).toBe(400);
    expect(await refreshStatus(token.app, second.refresh)).toBe(200);
  });

  test('the audit hook is told, without the token', async () => {
    const { refresh } = await login(token.app);
    await request(token.app).post('/revoke').type('form').send({ token: refresh });
    const event = token.audit.findLast((e) => e.type === 'refresh_token.revoked');
    expect(event).toBeDefined();
    expect(JSON.stringify(token.audit)).not.toContain(refresh.slice(4));
  });
});

describe('RFC 7009 §2.1: token_type_hint only orders the search', () => {
  const token = tokenApp({ throttle: false });

  test('a refresh token sent with hint "access_token" is still found and revoked', async () => {
    const { refresh } = await login(token.app);
    expect((await request(token.app).post('/revoke').type('form').send({ token: refresh, token_type_hint: 'access_token' })).status).toBe(200);
    expect(await refreshStatus(token.app, refresh)).toBe(400);
  });

  test('an unknown hint value is ignored and the token revoked', async () => {
    const { refresh } = await login(token.app);
    expect((await request(token.app).post('/revoke').type('form').send({ token: refresh, token_type_hint: 'refresh' })).status).toBe(200);
    expect(await refreshStatus(token.app, refresh)).toBe(400);
  });

  test('an access token (JWT, verified offline by registries) is 400 unsupported_token_type (§2.2.1)', async () => {
    const { access } = await login(token.app);
    const res = await request(token.app).post('/revoke').type('form').send({ token: access, token_type_hint: 'access_token' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_token_type');
  });
});

describe('host API: revokeRefreshToken and revokeSubject (password change, account removal)', () => {
  const token = tokenApp({ throttle: false });

  test('revokeRefreshToken resolves to whether the token existed, and the token is refused', async () => {
    const { refresh } = await login(token.app);
    expect(await token.router.tokenService.revokeRefreshToken(refresh)).toBe(true);
    expect(await token.router.tokenService.revokeRefreshToken(refresh)).toBe(false);
    expect(await refreshStatus(token.app, refresh)).toBe(400);
  });

  test('revokeSubject revokes every token of the account, no other account\'s, and new logins still work', async () => {
    const alice = [await login(token.app), await login(token.app), await login(token.app)];
    const bob = await login(token.app, 'bob', 'builder');
    expect(await token.router.tokenService.revokeSubject('alice')).toBe(3);
    for (const t of alice) expect(await refreshStatus(token.app, t.refresh)).toBe(400);
    expect(await refreshStatus(token.app, bob.refresh)).toBe(200);
    const again = await login(token.app);
    expect(await refreshStatus(token.app, again.refresh)).toBe(200);
  });
});

describeWithPeers('revocation with a shared Redis store takes effect at every instance at once', [redis()], () => {
  const keyPrefix = `spec:${randomBytes(6).toString('hex')}:`;
  let stores: RedisRefreshTokenStore[];
  let first: TokenApp;
  let second: TokenApp;

  beforeAll(() => {
    stores = [new RedisRefreshTokenStore({ url: 'redis://127.0.0.1:6379', keyPrefix }), new RedisRefreshTokenStore({ url: 'redis://127.0.0.1:6379', keyPrefix })];
    first = tokenApp({ throttle: false, refreshTokens: { store: stores[0] } });
    second = tokenApp({ throttle: false, refreshTokens: { store: stores[1] } });
  });

  afterAll(async () => {
    for (const subject of ['alice', 'bob']) await stores[0]?.revokeSubject(subject);
    await Promise.all(stores.map((s) => s.close()));
  });

  test('a token from one instance, revoked through POST /revoke at the other, is refused by both', async () => {
    const { refresh } = await login(first.app);
    expect(await refreshStatus(second.app, refresh)).toBe(200);
    expect((await request(second.app).post('/revoke').type('form').send({ token: refresh })).status).toBe(200);
    expect(await refreshStatus(first.app, refresh)).toBe(400);
    expect(await refreshStatus(second.app, refresh)).toBe(400);
  });

  test('revokeSubject at one instance revokes the tokens issued by both', async () => {
    const tokens = [await login(first.app), await login(second.app)];
    const bob = await login(second.app, 'bob', 'builder');
    expect(await first.router.tokenService.revokeSubject('alice')).toBe(2);
    for (const t of tokens) {
      expect(await refreshStatus(first.app, t.refresh)).toBe(400);
      expect(await refreshStatus(second.app, t.refresh)).toBe(400);
    }
    expect(await refreshStatus(first.app, bob.refresh)).toBe(200);
  });
});
