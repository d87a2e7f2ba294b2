import { TokenCache } from '../../lib/bearer/verify/token-cache.js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { startJwksServer, type JwksServer } from './jwks-server.js';
import { ISSUER, protectedApp, SERVICE, sign, tokens } from './support.js';

// The JWKS endpoint is fetched on every signature check (cacheMaxAge 0), so its fetch count is
// the number of signature checks: what the verified-token cache saves is visible from outside.
let server: JwksServer;
beforeAll(async () => {
  server = await startJwksServer(tokens.tokenService.keyRing.jwks);
});
afterAll(() => server.close());

function appWith(options: Parameters<typeof protectedApp>[0] = {}) {
  return protectedApp({ keys: { jwksUrl: server.url, cacheMaxAge: 0, cooldownDuration: 0 }, issuer: ISSUER, service: SERVICE, ...options });
}
const tags = (app: ReturnType<typeof protectedApp>, token: string) =>
  request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`);

describe('a verified token is cached: reusing it costs a lookup, not a signature check', () => {
  test('ten requests with one token: one signature check', async () => {
    const app = appWith();
    const token = await sign();
    const before = server.fetches;
    for (let i = 0; i < 10; i++) expect((await tags(app, token)).status).toBe(200);
    expect(server.fetches - before).toBe(1);
  });
  test('with cache: false every request is checked', async () => {
    const app = appWith({ cache: false });
    const token = await sign();
    const before = server.fetches;
    for (let i = 0; i < 3; i++) expect((await tags(app, token)).status).toBe(200);
    expect(server.fetches - before).toBe(3);
  });
  test('failures are not cached', async () => {
    const app = appWith();
    const before = server.fetches;
    for (let i = 0; i < 2; i++) expect((await tags(app, await sign({ claims: { aud: 'other' } }))).status).toBe(401);
    expect(server.fetches - before).toBe(2);
  });
});

describe('a cached token is still checked per request', () => {
  test('the access check runs on every request: a cached pull token is refused on a push route', async () => {
    const app = appWith();
    const token = await sign();
    expect((await tags(app, token)).status).toBe(200);
    const push = await request(app).put('/v2/alice/app/manifests/1').set('Authorization', `Bearer ${token}`);
    expect(push.status).toBe(401);
    expect(push.headers['www-authenticate']).toContain('error="insufficient_scope"');
  });
  test('a cached token is rejected once it expires (exp plus the leeway)', async () => {
    let clock = Date.now();
    const app = appWith({ now: () => clock });
    const exp = Math.floor(clock / 1000) + 120;
    const token = await sign({ claims: { exp } });
    expect((await tags(app, token)).status).toBe(200);
    clock = exp * 1000 + 59_000;
    expect((await tags(app, token)).status).toBe(200);
    clock = exp * 1000 + 61_000;
    const res = await tags(app, token);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
  });
});

describe('the cache is bounded: the least recently used token is dropped', () => {
  test('maxEntries 2: a third token evicts the oldest, which then needs a new check', async () => {
    const app = appWith({ cache: { maxEntries: 2 } });
    const [a, b, c] = await Promise.all([sign(), sign(), sign()]);
    for (const t of [a, b]) await tags(app, t as string);
    await tags(app, a as string); // a is now the most recently used
    const before = server.fetches;
    await tags(app, c as string); // evicts b
    await tags(app, a as string);
    expect(server.fetches - before).toBe(1);
    await tags(app, b as string);
    expect(server.fetches - before).toBe(2);
  });
});

describe('the cache keeps a token in use: a hit moves it to the young end once half the cache went by', () => {
  test('maxEntries 4: a token hit after two insertions outlives the tokens inserted after it', () => {
    const cache = new TokenCache(4);
    const bearer = { subject: 'a', access: [], expiresAt: new Date(0), claims: {} };
    cache.set('hot', bearer, 1000);
    cache.set('t1', bearer, 1000);
    cache.set('t2', bearer, 1000);
    expect(cache.get('hot', 0)).toBe(bearer);
    for (const t of ['t3', 't4', 't5']) cache.set(t, bearer, 1000);
    expect(cache.get('hot', 0)).toBe(bearer);
    expect(cache.get('t1', 0)).toBeUndefined();
    expect(cache.size).toBe(4);
  });
});
