import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { fetchToken, TokenFetchError } from '../../../lib/client/registry/index.js';
import { startAuthServer, startGetOnlyServer } from './servers.js';

const SERVICE = 'registry.client-spec';
const password = { type: 'password', username: 'alice', password: 'pw' } as const;
let auth: Awaited<ReturnType<typeof startAuthServer>>;
beforeAll(async () => {
  auth = await startAuthServer(SERVICE);
});
afterAll(() => auth.close());

describe('POST with the password or refresh_token grant (distribution OAuth spec)', () => {
  test('password grant: form fields, one space-joined scope, access_type=offline for a refresh token', async () => {
    const before = auth.seen.length;
    const res = await fetchToken({ realm: auth.realm, service: SERVICE, scopes: ['repository:alice/a:pull', 'repository:alice/b:pull'], grant: password, offline: true });
    expect(res).toMatchObject({ expiresIn: 300, method: 'POST' });
    expect(typeof res.token).toBe('string');
    expect(res.refreshToken).toMatch(/^dgr_/);
    const sent = auth.seen.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toEqual({
      service: SERVICE, client_id: 'dockgate', grant_type: 'password', username: 'alice', password: 'pw', access_type: 'offline',
      scope: 'repository:alice/a:pull repository:alice/b:pull',
    });
    expect(sent[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
  });
  test('refresh_token grant with the refresh token from a password login', async () => {
    const login = await fetchToken({ realm: auth.realm, service: SERVICE, scopes: [], grant: password, offline: true });
    const before = auth.seen.length;
    const res = await fetchToken({ realm: auth.realm, service: SERVICE, scopes: ['repository:alice/a:pull'], grant: { type: 'refresh_token', refreshToken: login.refreshToken as string }, clientId: 'spec' });
    expect(res.method).toBe('POST');
    expect(auth.seen[before]?.body).toMatchObject({ grant_type: 'refresh_token', refresh_token: login.refreshToken, client_id: 'spec' });
  });
  test('a refusal is a TokenFetchError with status and OAuth error, and no secret in its message', async () => {
    const err = await fetchToken({ realm: auth.realm, service: SERVICE, scopes: [], grant: { ...password, password: 'wrong-secret' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenFetchError);
    expect(err).toMatchObject({ status: 400, oauthError: 'invalid_grant', code: 'ERR_TOKEN_FETCH' });
    expect((err as Error).message).not.toContain('wrong-secret');
  });
});

describe('GET fallback when POST answers 404 or 405, and only then', () => {
  test.each([404, 405])('POST %i → GET with Basic, account, repeated scope, offline_token and client_id', async (status) => {
    const server = await startGetOnlyServer(status, () => ({ status: 200, body: { token: 'opaque-token', expires_in: 120, issued_at: '2030-01-01T00:00:00Z' } }));
    try {
      const res = await fetchToken({ realm: server.realm, service: 's', scopes: ['repository:a/b:pull', 'repository:c/d:pull'], grant: password, offline: true });
      expect(res).toEqual({ token: 'opaque-token', expiresIn: 120, issuedAt: new Date('2030-01-01T00:00:00Z'), method: 'GET' });
      const get = server.seen[1];
      expect(get?.method).toBe('GET');
      const url = new URL(get?.url as string, server.origin);
      expect(url.searchParams.getAll('scope')).toEqual(['repository:a/b:pull', 'repository:c/d:pull']);
      expect(Object.fromEntries([...url.searchParams].filter(([k]) => k !== 'scope'))).toEqual({ service: 's', account: 'alice', offline_token: 'true', client_id: 'dockgate' });
      expect(get?.headers.authorization).toBe(`Basic ${Buffer.from('alice:pw').toString('base64')}`);
    } finally {
      await server.close();
    }
  });
  test.each([400, 401, 403, 500])('POST %i does not fall back', async (status) => {
    const server = await startGetOnlyServer(status, () => ({ status: 200, body: { token: 't' } }));
    try {
      await expect(fetchToken({ realm: server.realm, service: 's', scopes: [], grant: password })).rejects.toMatchObject({ status });
      expect(server.seen.map((s) => s.method)).toEqual(['POST']);
    } finally {
      await server.close();
    }
  });
  test('a refresh token is never put in a GET URL: the fallback goes without it', async () => {
    const server = await startGetOnlyServer(405, () => ({ status: 200, body: { token: 't' } }));
    try {
      await fetchToken({ realm: server.realm, service: 's', scopes: [], grant: { type: 'refresh_token', refreshToken: 'dgr_secret' } });
      expect(JSON.stringify(server.seen[1])).not.toContain('dgr_secret');
      expect(server.seen[1]?.headers.authorization).toBeUndefined();
    } finally {
      await server.close();
    }
  });
  test('anonymous requests use GET without Authorization', async () => {
    const server = await startGetOnlyServer(405, () => ({ status: 200, body: { token: 't' } }));
    try {
      expect((await fetchToken({ realm: server.realm, service: 's', scopes: ['repository:a/b:pull'], grant: { type: 'anonymous' } })).method).toBe('GET');
      expect(server.seen.map((s) => [s.method, s.headers.authorization])).toEqual([['GET', undefined]]);
    } finally {
      await server.close();
    }
  });
});

describe('the response: token or access_token, expires_in defaults to 60, issued_at to completion', () => {
  const cases: Array<[string, unknown, { token: string; expiresIn: number; issuedAt?: Date }]> = [
    ['no expires_in, no issued_at', { token: 't1' }, { token: 't1', expiresIn: 60 }],
    ['expires_in under 60 is raised to 60, as Docker does', { token: 't2', expires_in: 10 }, { token: 't2', expiresIn: 60 }],
    ['an unreadable issued_at counts from completion', { token: 't3', issued_at: 'yesterday' }, { token: 't3', expiresIn: 60 }],
    ['access_token wins over token', { token: 'old', access_token: 'new', expires_in: 900 }, { token: 'new', expiresIn: 900 }],
  ];
  test.each(cases)('%s', async (_name, body, expected) => {
    const server = await startGetOnlyServer(404, () => ({ status: 200, body }));
    try {
      const res = await fetchToken({ realm: server.realm, scopes: [], grant: { type: 'anonymous' }, now: () => Date.parse('2031-05-05T05:05:05Z') });
      expect(res).toEqual({ issuedAt: new Date('2031-05-05T05:05:05Z'), method: 'GET', ...expected });
    } finally {
      await server.close();
    }
  });
  test('no token in a 200 answer, or a realm that is not an http(s) URL: TokenFetchError', async () => {
    const server = await startGetOnlyServer(404, () => ({ status: 200, body: { expires_in: 60 } }));
    try {
      await expect(fetchToken({ realm: server.realm, scopes: [], grant: { type: 'anonymous' } })).rejects.toThrow('without a token');
    } finally {
      await server.close();
    }
    await expect(fetchToken({ realm: 'file:///etc/passwd', scopes: [], grant: { type: 'anonymous' } })).rejects.toThrow(TokenFetchError);
    await expect(fetchToken({ realm: 'not a url', scopes: [], grant: { type: 'anonymous' } })).rejects.toThrow(TokenFetchError);
  });
  test('an unreachable server is a TokenFetchError', async () => {
    await expect(fetchToken({ realm: 'http://127.0.0.1:1/token', scopes: [], grant: { type: 'anonymous' } })).rejects.toThrow(TokenFetchError);
  });
});
