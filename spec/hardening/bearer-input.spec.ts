/**
 * Hardening of requireBearer: whatever arrives in Authorization or in the path the scope is built
 * from, the answer is the registry's {"errors":[…]} with a well-formed challenge (401) or
 * NAME_INVALID (400), never a 500, and nothing from the request is reflected into a header.
 */
import { describe, test, expect } from '@jest/globals';
import express, { type Express } from 'express';
import request from 'supertest';
import { bearerGuard } from '../../lib/bearer/index.js';
import { TokenCache } from '../../lib/bearer/verify/token-cache.js';
import { writeEngineAuthError } from '../../lib/engine/index.js';
import { REALM, SERVICE, sign, tokens } from '../bearer/support.js';
import { expectEngineError, expectRegistryError } from './support.js';

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const header = b64({ alg: 'ES256', typ: 'JWT' });

function protectedApp(options: Partial<Parameters<typeof bearerGuard>[0]> = {}): { app: Express; failures: unknown[] } {
  const failures: unknown[] = [];
  const guard = bearerGuard({ realm: REALM, keys: tokens, ...options });
  const app = express();
  app.get('/v2/*name/tags/list', guard((req) => `repository:${(req.params as { name: string[] }).name.join('/')}:pull`), (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/one/:name', guard((req) => `repository:alice/${(req.params as { name: string }).name}:pull`), (_req, res) => {
    res.json({ ok: true });
  });
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    failures.push(err);
    res.status(500).json({ failed: true });
  });
  return { app, failures };
}

function expectChallenge(value: unknown, error?: string): void {
  const text = String(value);
  expect(text).toMatch(/^Bearer realm="[^"]*",service="[^"]*"(,scope="[^"]*")?(,error="(invalid_token|insufficient_scope)")?$/);
  if (error) expect(text).toContain(`error="${error}"`);
  else expect(text).not.toContain('error=');
  expect(text).not.toMatch(/[\r\n]/);
}

describe('a malformed bearer token is 401 UNAUTHORIZED with error="invalid_token", never a 500', () => {
  const garbage: [string, string][] = [
    ['one part', 'abc'],
    ['two parts', `${header}.${b64({ sub: 'alice' })}`],
    ['four parts', `${header}.${b64({ sub: 'alice' })}.sig.extra`],
    ['five parts (a JWE shape)', 'a.b.c.d.e'],
    ['characters outside base64url', `${header}.$$$.***`],
    ['a header that is not JSON', `${b64('not json')}.${b64({})}.sig`],
    ['a header that is a JSON array', `${b64([1, 2])}.${b64({})}.sig`],
    ['a payload that is a JSON array', `${header}.${b64([1])}.sig`],
    ['a payload that is JSON null', `${header}.${b64('null')}.sig`],
    ['a payload that is a JSON string', `${header}.${b64('"x"')}.sig`],
    ['a header with unknown crit', `${b64({ alg: 'ES256', crit: ['x'], x: 1 })}.${b64({})}.sig`],
    ['alg none with an empty signature', `${b64({ alg: 'none' })}.${b64({ sub: 'alice' })}.`],
    ['a 12 KB token', `${header}.${'A'.repeat(12_000)}.sig`],
    ['NUL bytes after decoding', `${b64('\u0000\u0000')}.${b64('\u0000')}.AAAA`],
  ];
  for (const [what, token] of garbage) {
    test(`${what}`, async () => {
      const { app, failures } = protectedApp();
      const res = await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`);
      expectRegistryError(res, 401, 'UNAUTHORIZED');
      expectChallenge(res.headers['www-authenticate'], 'invalid_token');
      expect(failures).toEqual([]);
    });
  }
});

describe('a validly signed token with claims of the wrong type is invalid_token (no claim is trusted by shape)', () => {
  const claims: [string, Record<string, unknown>][] = [
    ['access is a string', { access: 'repository:alice/app:pull' }],
    ['access is an object', { access: { type: 'repository', name: 'alice/app', actions: ['pull'] } }],
    ['access holds a number', { access: [1] }],
    ['access entry without actions', { access: [{ type: 'repository', name: 'alice/app' }] }],
    ['access entry with a string for actions', { access: [{ type: 'repository', name: 'alice/app', actions: 'pull' }] }],
    ['access entry with numeric actions', { access: [{ type: 'repository', name: 'alice/app', actions: [1] }] }],
    ['sub is a number', { sub: 42 }],
    ['exp is a string', { exp: 'tomorrow' }],
    ['exp is missing', { exp: undefined }],
    ['aud is another service', { aud: 'other' }],
    ['iss is an object', { iss: { x: 1 } }],
  ];
  for (const [what, extra] of claims) {
    test(what, async () => {
      const { app, failures } = protectedApp();
      const token = await sign({ claims: extra as never });
      const res = await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`);
      expectRegistryError(res, 401, 'UNAUTHORIZED');
      expectChallenge(res.headers['www-authenticate'], 'invalid_token');
      expect(failures).toEqual([]);
    });
  }
  test('access: null is no access at all: insufficient_scope, not a crash', async () => {
    const { app } = protectedApp();
    const res = await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${await sign({ claims: { access: null } as never })}`);
    expectRegistryError(res, 401, 'UNAUTHORIZED');
    expectChallenge(res.headers['www-authenticate'], 'insufficient_scope');
  });
});

describe('an Authorization header that is not "Bearer <token>" counts as no token: a challenge without error', () => {
  // "Bearer " with an empty token cannot arrive: HTTP parsers strip the trailing space.
  for (const value of ['Basic YTpi', 'Bearer', 'Bearer  two-spaces', 'Bearer a b', 'Token abc', 'bearer']) {
    test(JSON.stringify(value), async () => {
      const { app } = protectedApp();
      const res = await request(app).get('/v2/alice/app/tags/list').set('Authorization', value);
      expectRegistryError(res, 401, 'UNAUTHORIZED');
      expectChallenge(res.headers['www-authenticate']);
    });
  }
});

describe('a scope built from a malformed path is 400 NAME_INVALID, and nothing from the path reaches a header', () => {
  const paths = [
    '/v2/alice/%E2%82%AC/tags/list',
    '/v2/alice/a%0D%0AX-Injected:%201/tags/list',
    '/v2/alice/a%22b/tags/list',
    '/v2/alice/../bob/tags/list',
    '/v2/alice/%2e%2e/bob/tags/list',
    '/v2/alice%2F..%2Fbob/tags/list',
    '/v2/Alice/App/tags/list',
    '/v2/alice//app/tags/list',
    '/v2/alice/a%00b/tags/list',
    `/v2/alice/${'a'.repeat(300)}/tags/list`,
    '/one/a%20repository:bob%2Fx:push',
    '/one/x:push',
  ];
  for (const path of paths) {
    test(path.length > 80 ? `${path.slice(0, 60)}… (over 255 characters)` : path, async () => {
      const { app, failures } = protectedApp();
      const res = await request(app).get(path).set('Authorization', `Bearer ${await sign()}`);
      expectRegistryError(res, 400, 'NAME_INVALID');
      expect(res.headers['x-injected']).toBeUndefined();
      expect(failures).toEqual([]);
    });
  }
  test('a percent-encoded slash inside one segment names the same repository as the plain path, so the scope matches what the handler sees', async () => {
    const { app } = protectedApp();
    const res = await request(app).get('/v2/alice%2Fapp/tags/list');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('scope="repository:alice/app:pull"');
  });
});

describe('the verified-token cache stays within maxEntries whatever tokens arrive', () => {
  test('inserting more tokens than maxEntries evicts the least recently used', () => {
    const cache = new TokenCache(3);
    const bearer = { subject: 's', access: [], expiresAt: new Date(Date.now() + 60_000), claims: {} };
    for (let i = 0; i < 50; i++) cache.set(`t${i}`, bearer, Date.now() + 60_000);
    expect(cache.size).toBe(3);
    expect(cache.get('t0', Date.now())).toBeUndefined();
    expect(cache.get('t49', Date.now())).toBe(bearer);
  });
  test('invalid tokens are never cached, so garbage cannot evict good entries', async () => {
    const { app } = protectedApp({ cache: { maxEntries: 1 } });
    const good = await sign();
    expect((await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${good}`)).status).toBe(200);
    for (let i = 0; i < 5; i++) await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer junk${i}`);
    expect((await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${good}`)).status).toBe(200);
  });
});

describe('with writeEngineAuthError the same failures come back in the engine shape', () => {
  test('garbage token: 401 {"message"} with Content-Type exactly application/json and the challenge', async () => {
    const guard = bearerGuard({ realm: REALM, keys: tokens, service: SERVICE, writeError: writeEngineAuthError });
    const app = express();
    app.get('/engine/version', guard('engine:api:read'), (_req, res) => {
      res.json({});
    });
    for (const token of ['a.b', 'a.b.c.d', `${header}.${b64([1])}.x`]) {
      const res = await request(app).get('/engine/version').set('Authorization', `Bearer ${token}`);
      expectEngineError(res, 401, 'invalid token');
      expectChallenge(res.headers['www-authenticate'], 'invalid_token');
    }
  });
});
