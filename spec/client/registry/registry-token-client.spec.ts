import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { parseChallenge, RegistryTokenClient, TokenFetchError } from '../../../lib/client/registry/index.js';
import { startAuthServer, startGetOnlyServer, startRegistry } from './servers.js';

const SERVICE = 'registry.client-spec';
let auth: Awaited<ReturnType<typeof startAuthServer>>;
let registry: Awaited<ReturnType<typeof startRegistry>>;
beforeAll(async () => {
  auth = await startAuthServer(SERVICE);
  registry = await startRegistry(auth.tokens, auth.realm);
});
afterAll(async () => {
  await registry.close();
  await auth.close();
});

const alice = { username: 'alice', password: 'pw' };
const challengeFor = (scope: string) => parseChallenge(`Bearer realm="${auth.realm}",service="${SERVICE}",scope="${scope}"`)!;
const grantsSince = (n: number) => auth.seen.slice(n).map((s) => (s.method === 'POST' ? s.body.grant_type : 'GET'));

describe('the challenge flow end to end: 401 → token → retry with Bearer', () => {
  test('client.fetch lists tags of a protected registry', async () => {
    const client = new RegistryTokenClient({ credentials: alice });
    const res = await client.fetch(`${registry.origin}/v2/alice/app/tags/list`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: 'alice/app', tags: ['v1'] });
  });
  test('a 401 without a Bearer challenge, and any other status, are returned as they are', async () => {
    const client = new RegistryTokenClient({ credentials: alice });
    expect((await client.fetch(`${registry.origin}/nothing`)).status).toBe(404);
  });
});

describe('the access token is reused until it expires', () => {
  test('same challenge: one exchange; after expiry a new one, with the refresh token instead of the password', async () => {
    let clock = Date.now();
    const client = new RegistryTokenClient({ credentials: alice, now: () => clock });
    const before = auth.seen.length;
    const first = await client.token(challengeFor('repository:alice/app:pull'));
    expect(await client.token(challengeFor('repository:alice/app:pull'))).toBe(first);
    expect(grantsSince(before)).toEqual(['password']);
    clock += 300_000 - 5_000; // expires_in 300, minus the 5 s margin
    const second = await client.token(challengeFor('repository:alice/app:pull'));
    expect(second).not.toBe(first);
    expect(grantsSince(before)).toEqual(['password', 'refresh_token']);
  });
  test('another scope is another token', async () => {
    const client = new RegistryTokenClient({ credentials: alice });
    const before = auth.seen.length;
    await client.token(challengeFor('repository:alice/a:pull'));
    await client.token(challengeFor('repository:alice/b:pull'));
    expect(grantsSince(before)).toEqual(['password', 'refresh_token']);
  });
  test('without expires_in the token is kept 60 s from when the exchange completed (no issued_at)', async () => {
    let clock = Date.parse('2031-01-01T00:00:00Z');
    let n = 0;
    const server = await startGetOnlyServer(404, () => ({ status: 200, body: { token: `t${++n}` } }));
    try {
      const client = new RegistryTokenClient({ now: () => clock, expiryMargin: 0 });
      const ch = parseChallenge(`Bearer realm="${server.realm}",service="s"`)!;
      expect(await client.token(ch)).toBe('t1');
      clock += 59_999;
      expect(await client.token(ch)).toBe('t1');
      clock += 1;
      expect(await client.token(ch)).toBe('t2');
    } finally {
      await server.close();
    }
  });
});

describe('the refresh token goes only to the authorization server that issued it', () => {
  test('never to the registry: not in any header, URL or body the registry saw', async () => {
    const client = new RegistryTokenClient({ credentials: alice });
    const seenBefore = registry.seen.length;
    await client.fetch(`${registry.origin}/v2/`);
    await client.fetch(`${registry.origin}/v2/alice/app/tags/list`);
    expect(client.hasRefreshToken(auth.realm)).toBe(true);
    const issued = auth.seen.map((s) => s.body.refresh_token).filter(Boolean);
    const registryTraffic = JSON.stringify(registry.seen.slice(seenBefore));
    expect(registryTraffic).toContain('Bearer ');
    expect(registryTraffic).not.toMatch(/dgr_/);
    for (const token of issued) expect(registryTraffic).not.toContain(token);
  });
  test('not to a realm on another origin: that one gets the password', async () => {
    const client = new RegistryTokenClient({ credentials: alice });
    await client.token(challengeFor('repository:alice/app:pull'));
    const other = await startGetOnlyServer(405, () => ({ status: 200, body: { token: 'other' } }));
    try {
      await client.token(parseChallenge(`Bearer realm="${other.realm}",service="${SERVICE}"`)!);
      expect(other.seen.map((s) => s.body.grant_type ?? 'GET')).toEqual(['password', 'GET']);
      expect(JSON.stringify(other.seen)).not.toMatch(/dgr_/);
    } finally {
      await other.close();
    }
  });
  test('a configured refresh token (a docker identitytoken) is bound to its realm; elsewhere the client is anonymous', async () => {
    const issued = await fetch(auth.realm, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'pw', service: SERVICE, client_id: 'x', access_type: 'offline' }),
    }).then((r) => r.json() as Promise<{ refresh_token: string }>);
    const client = new RegistryTokenClient({ credentials: { refreshToken: issued.refresh_token, realm: auth.realm } });
    const before = auth.seen.length;
    await client.token(challengeFor('repository:alice/app:pull'));
    expect(auth.seen[before]?.body).toMatchObject({ grant_type: 'refresh_token', refresh_token: issued.refresh_token });
    const other = await startGetOnlyServer(405, () => ({ status: 200, body: { token: 'anon' } }));
    try {
      await client.token(parseChallenge(`Bearer realm="${other.realm}"`)!);
      expect(JSON.stringify(other.seen)).not.toContain(issued.refresh_token);
      expect(other.seen.map((s) => [s.method, s.headers.authorization])).toEqual([['GET', undefined]]);
    } finally {
      await other.close();
    }
  });
  test('a refused refresh token is dropped and the password used again', async () => {
    let clock = Date.now();
    const client = new RegistryTokenClient({ credentials: alice, now: () => clock });
    await client.token(challengeFor('repository:alice/app:pull'));
    await auth.tokens.tokenService.revokeSubject('alice');
    clock += 600_000;
    const before = auth.seen.length;
    await client.token(challengeFor('repository:alice/app:pull'));
    expect(grantsSince(before)).toEqual(['refresh_token', 'password']);
    expect(client.hasRefreshToken(auth.realm)).toBe(true);
  });
  test('wrong credentials: TokenFetchError, the password nowhere in it', async () => {
    const client = new RegistryTokenClient({ credentials: { username: 'alice', password: 'not-the-password' } });
    const err = await client.token(challengeFor('repository:alice/app:pull')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenFetchError);
    expect(JSON.stringify({ ...(err as object), message: (err as Error).message })).not.toContain('not-the-password');
  });
});

describe('options are validated at construction', () => {
  test.each([
    [{ credentials: { username: '', password: 'x' } }, 'credentials'],
    [{ credentials: { refreshToken: 'r', realm: 'relative' } }, 'credentials.realm'],
    [{ credentials: { refreshToken: '', realm: 'http://a/' } }, 'credentials.refreshToken'],
    [{ expiryMargin: -1 }, 'expiryMargin'],
    [{ maxCachedTokens: 0 }, 'maxCachedTokens'],
  ])('%j → TypeError naming %s', (options, name) => {
    expect(() => new RegistryTokenClient(options as never)).toThrow(`"${name}"`);
  });
});

describe('a password goes only over https, to a loopback realm, or to an http host the caller named', () => {
  /**
   * A hostile registry (real, on 127.0.0.1) whose challenge names a plain-http realm on another
   * host. The network here is loopback only, so the client's fetch resolves that host name to a
   * local collector, as DNS would, recording what it would have been sent.
   */
  async function hostileSetup(options: ConstructorParameters<typeof RegistryTokenClient>[0] = {}) {
    const collector = await startGetOnlyServer(405, () => ({ status: 200, body: { token: 'stolen' } }));
    const evilRealm = 'http://collector.example:8080/token';
    const { default: express } = await import('express');
    const { listen } = await import('./servers.js');
    const app = express();
    app.use((_req, res) => {
      res.status(401).set('WWW-Authenticate', `Bearer realm="${evilRealm}",service="evil",scope="repository:alice/app:pull"`).json({ errors: [] });
    });
    const hostile = await listen(app);
    const reached: string[] = [];
    const dns: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.hostname === 'collector.example') {
        reached.push(url.href);
        return fetch(`${collector.origin}${url.pathname}${url.search}`, init);
      }
      return fetch(input, init);
    };
    const client = new RegistryTokenClient({ credentials: alice, fetch: dns, ...options });
    return { client, collector, hostile, reached, close: async () => { await hostile.close(); await collector.close(); } };
  }

  test('a hostile registry naming an http:// realm on another host: TokenFetchError, nothing sent there', async () => {
    const setup = await hostileSetup();
    try {
      const err = await setup.client.fetch(`${setup.hostile.origin}/v2/alice/app/tags/list`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TokenFetchError);
      expect((err as Error).message).toContain('refusing to send the password to http://collector.example:8080');
      expect((err as Error).message).toContain('"plainHttpPasswordHosts"');
      expect(setup.reached).toEqual([]);
      expect(setup.collector.seen).toEqual([]);
    } finally {
      await setup.close();
    }
  });

  test('the caller can name the host (plainHttpPasswordHosts); then the password goes there', async () => {
    const setup = await hostileSetup({ plainHttpPasswordHosts: ['collector.example:8080'] });
    try {
      await setup.client.token(parseChallenge('Bearer realm="http://collector.example:8080/token",service="evil"')!);
      expect(setup.collector.seen.map((s) => s.body.password ?? s.headers.authorization)).toContain('pw');
    } finally {
      await setup.close();
    }
  });

  test('an https:// realm on another host gets the password (TLS protects it on the way)', async () => {
    const sent: string[] = [];
    const tls: typeof fetch = async (input, init) => {
      sent.push(String((init?.body as string | undefined) ?? ''));
      return new Response(JSON.stringify({ access_token: 't', expires_in: 300 }), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const client = new RegistryTokenClient({ credentials: alice, fetch: tls });
    await expect(client.token(parseChallenge('Bearer realm="https://auth.example/token",service="s"')!)).resolves.toBe('t');
    expect(sent.join('')).toContain('password=pw');
  });

  test('plainHttpPasswordHosts is validated', () => {
    expect(() => new RegistryTokenClient({ plainHttpPasswordHosts: ['http://x'] })).toThrow('"plainHttpPasswordHosts"');
  });
});
