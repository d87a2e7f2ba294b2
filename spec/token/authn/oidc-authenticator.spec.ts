/**
 * oidcAuthenticator behind the token router, with ID tokens from a real OpenID Connect provider
 * (oidc-provider 9 in this process, discovery and JWKS over HTTP).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { chainAuthenticators, htpasswdAuthenticator, htpasswdLine } from '../../../lib/index.js';
import { oidcAuthenticator, type OidcAuthenticatorOptions } from '../../../lib/token/authn/oidc/index.js';
import { startOidcIssuer, type RunningOidcIssuer } from '../../interop/support/oidc-issuer.js';
import { basic, claimsOf, form, SERVICE, tokenApp } from '../../support/token-fixture.js';

const AUD = 'dockgate-registry';
const github = { sub: 'repo:acme/app:ref:refs/heads/main', repository: 'acme/app', repository_owner: 'acme', ref: 'refs/heads/main', environment: 'prod' };

let idp: RunningOidcIssuer;
let gitlab: RunningOidcIssuer;
beforeAll(async () => {
  idp = await startOidcIssuer({ clients: [AUD, 'other'] });
  gitlab = await startOidcIssuer({ clients: [AUD] });
});
afterAll(async () => {
  await idp?.stop();
  await gitlab?.stop();
});

const options = (extra: Partial<OidcAuthenticatorOptions> = {}): OidcAuthenticatorOptions => ({
  issuers: [{ issuer: idp.issuer, audience: AUD, account: 'repository_owner', labels: { repository: 'repository', ref: 'ref', environment: 'environment' } }],
  ...extra,
});
const getToken = (app: Parameters<typeof request>[0], user: string, password: string, query = '') =>
  request(app).get(`/token?service=${SERVICE}${query}`).set('Authorization', basic(user, password));
const passwordGrant = (password: string, extra: Record<string, string> = {}) =>
  form({ grant_type: 'password', service: SERVICE, client_id: 'ci', username: 'oidc', password, ...extra });

describe('the ID token is the password of the fixed user name, in Basic on GET and in the password grant', () => {
  test('GET with Basic oidc:<ID token> is answered, subject and labels from the claims', async () => {
    const identities: unknown[] = [];
    const { app } = tokenApp({ authenticate: oidcAuthenticator(options()), authorize: (r) => { identities.push(r); return r.scopes; } });
    const res = await getToken(app, 'oidc', await idp.idToken(AUD, github), '&scope=repository:acme/app:push');
    expect(res.status).toBe(200);
    expect(claimsOf(res.body.token).sub).toBe('acme');
    expect(identities).toEqual([expect.objectContaining({ account: 'acme', labels: { repository: ['acme/app'], ref: ['refs/heads/main'], environment: ['prod'] } })]);
  });
  test('the password grant with access_type=offline gets an access token and no refresh token', async () => {
    const { app } = tokenApp({ authenticate: oidcAuthenticator(options()) });
    const res = await request(app).post('/token').type('form').send(passwordGrant(await idp.idToken(AUD, github), { access_type: 'offline' }));
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('refresh_token');
  });
  test('expires_in is cut to the ID token\'s remaining life', async () => {
    const { app } = tokenApp({ authenticate: oidcAuthenticator(options()) });
    const idToken = await idp.idToken(AUD, github, 120);
    const res = await getToken(app, 'oidc', idToken, '&offline_token=true');
    expect(res.body.expires_in).toBeLessThanOrEqual(120);
    expect(res.body.expires_in).toBeGreaterThan(100);
    expect(res.body).not.toHaveProperty('refresh_token');
  });
  test('a configured user name other than oidc', async () => {
    const { app } = tokenApp({ authenticate: oidcAuthenticator(options({ username: 'ci-token' })) });
    const token = await idp.idToken(AUD, github);
    expect((await getToken(app, 'ci-token', token)).status).toBe(200);
    expect((await getToken(app, 'oidc', token)).status).toBe(401);
  });
});

describe('claims map to the identity', () => {
  test('the account from a function of the claims; undefined refuses', async () => {
    const authenticate = oidcAuthenticator({ issuers: [{ issuer: idp.issuer, audience: AUD, account: (c) => (c.environment === 'prod' ? `ci-${String(c.repository_owner)}` : undefined) }] });
    await expect(authenticate({ username: 'oidc', password: await idp.idToken(AUD, github), service: SERVICE })).resolves.toMatchObject({ subject: 'ci-acme' });
    await expect(authenticate({ username: 'oidc', password: await idp.idToken(AUD, { ...github, environment: 'dev' }), service: SERVICE })).resolves.toBeNull();
  });
  test('the account defaults to sub; list claims give several label values; absent claims no label', async () => {
    const authenticate = oidcAuthenticator({ issuers: [{ issuer: idp.issuer, audience: AUD, labels: { groups: 'groups', team: 'team' } }] });
    const identity = await authenticate({ username: 'oidc', password: await idp.idToken(AUD, { ...github, groups: ['a', 'b'] }), service: SERVICE });
    expect(identity).toMatchObject({ subject: github.sub, labels: { groups: ['a', 'b'] } });
    expect(identity?.expiresAt).toBeInstanceOf(Date);
  });
  test('a configured jwksUri is used without discovery', async () => {
    const authenticate = oidcAuthenticator({ issuers: [{ issuer: idp.issuer, audience: AUD, jwksUri: `${idp.issuer}/jwks` }] });
    await expect(authenticate({ username: 'oidc', password: await idp.idToken(AUD, github), service: SERVICE })).resolves.toMatchObject({ subject: github.sub });
  });
  test('several issuers, each with its own mapping', async () => {
    const authenticate = oidcAuthenticator({
      issuers: [
        { issuer: idp.issuer, audience: AUD, account: 'repository_owner' },
        { issuer: gitlab.issuer, audience: AUD, account: 'namespace_path' },
      ],
    });
    await expect(authenticate({ username: 'oidc', password: await idp.idToken(AUD, github), service: SERVICE })).resolves.toMatchObject({ subject: 'acme' });
    await expect(authenticate({ username: 'oidc', password: await gitlab.idToken(AUD, { sub: 'project_path:grp/app', namespace_path: 'grp' }), service: SERVICE })).resolves.toMatchObject({ subject: 'grp' });
  });
});

describe('tokens failing a check are refused (null); tokens not addressed here are not recognized (undefined)', () => {
  const ask = async (password: string, opts = options()) => oidcAuthenticator(opts)({ username: 'oidc', password, service: SERVICE });
  test('another audience, expired, or not yet valid (nbf) is null', async () => {
    await expect(ask(await idp.idToken('other', github))).resolves.toBeNull();
    await expect(ask(await idp.idToken(AUD, github, -120))).resolves.toBeNull();
    await expect(ask(await idp.idToken(AUD, { ...github, nbf: Math.floor(Date.now() / 1000) + 600 }))).resolves.toBeNull();
  });
  test('an algorithm the issuer is not allowed is null', async () => {
    const opts = options();
    await expect(ask(await idp.idToken(AUD, github), { issuers: [{ ...opts.issuers[0]!, algorithms: ['ES256'] }] })).resolves.toBeNull();
  });
  test('a tampered payload (signature no longer matches) is null', async () => {
    const [h, , s] = (await idp.idToken(AUD, github)).split('.');
    const forged = Buffer.from(JSON.stringify({ ...github, repository: 'acme/secret', iss: idp.issuer, aud: AUD, iat: 1, exp: 9999999999 })).toString('base64url');
    await expect(ask(`${h}.${forged}.${s}`)).resolves.toBeNull();
  });
  test('an unconfigured issuer, a password that is no JWT, or another user name is undefined', async () => {
    await expect(ask(await gitlab.idToken(AUD, github))).resolves.toBeUndefined();
    await expect(ask('hunter2')).resolves.toBeUndefined();
    await expect(oidcAuthenticator(options())({ username: 'alice', password: await idp.idToken(AUD, github), service: SERVICE })).resolves.toBeUndefined();
  });
  test('in a chain, htpasswd users still log in and oidc tokens reach the OIDC authenticator', async () => {
    const table = htpasswdAuthenticator({ content: await htpasswdLine('alice', 'wonderland', 4) });
    const { app } = tokenApp({ authenticate: chainAuthenticators(oidcAuthenticator(options()), table) });
    expect((await getToken(app, 'alice', 'wonderland')).status).toBe(200);
    expect((await getToken(app, 'oidc', await idp.idToken(AUD, github))).status).toBe(200);
    expect((await getToken(app, 'oidc', await idp.idToken('other', github))).status).toBe(401);
  });
});

describe('an issuer that cannot be reached or misdescribes itself is 503 with Retry-After', () => {
  let bad: Server;
  let badUrl: string;
  beforeAll(async () => {
    bad = createServer((_req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ issuer: 'https://elsewhere.example', jwks_uri: 'https://elsewhere.example/jwks' })); });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    badUrl = `http://127.0.0.1:${(bad.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => bad.close(() => r())));

  test('a discovery document naming another issuer (OIDC Discovery §4.3)', async () => {
    const { app } = tokenApp({ authenticate: oidcAuthenticator({ issuers: [{ issuer: badUrl, audience: AUD }] }) });
    // A token claiming that issuer, signed by anyone: it is never verified against unvouched keys.
    const [h, , s] = (await idp.idToken(AUD, github)).split('.');
    const claims = Buffer.from(JSON.stringify({ iss: badUrl, aud: AUD, sub: 'x', iat: 1, exp: 9999999999 })).toString('base64url');
    const res = await getToken(app, 'oidc', `${h}.${claims}.${s}`);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
  });
  test('an issuer that is down when first needed; it is asked again by the next login', async () => {
    const { app, errors } = tokenApp({ authenticate: oidcAuthenticator({ ...options(), retryAfter: 9 }) });
    const token = await idp.idToken(AUD, github);
    idp.setDown(true);
    try {
      const res = await getToken(app, 'oidc', token);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('9');
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(JSON.stringify(errors.map((e) => (e as Error).message))).not.toContain(token);
    } finally {
      idp.setDown(false);
    }
    expect((await getToken(app, 'oidc', token)).status).toBe(200);
  });
});

describe('an OIDC issuer (and a jwksUri) over http:// is refused at construction unless its host is loopback', () => {
  test.each([
    ['http://token.example.com', '"issuers[0].issuer" must be an https:// URL'],
    ['http://10.0.0.5:8080', '"issuers[0].issuer" must be an https:// URL'],
    ['http://127.0.0.1.example.com', '"issuers[0].issuer" must be an https:// URL'],
  ])('issuer %s is a TypeError naming the option', (issuer, message) => {
    expect(() => oidcAuthenticator({ issuers: [{ issuer, audience: 'a' }] })).toThrow(TypeError);
    expect(() => oidcAuthenticator({ issuers: [{ issuer, audience: 'a' }] })).toThrow(message);
  });
  test('a jwksUri over http:// on another host is refused, naming the option', () => {
    expect(() => oidcAuthenticator({ issuers: [{ issuer: 'https://i.example', audience: 'a', jwksUri: 'http://keys.example/jwks' }] }))
      .toThrow('"issuers[0].jwksUri" must be an https:// URL');
  });
  test.each(['http://127.0.0.1:8080', 'http://localhost:9000/realms/ci', 'http://[::1]:8443', 'https://token.example.com'])('%s is accepted', (issuer) => {
    expect(() => oidcAuthenticator({ issuers: [{ issuer, audience: 'a' }] })).not.toThrow();
  });
});

describe('oidcAuthenticator options are validated at construction, naming the option', () => {
  test.each([
    ['no issuers', { issuers: [] }, '"issuers" must be a non-empty list'],
    ['an issuer without audience', { issuers: [{ issuer: 'https://i.example' }] }, '"issuers[0].audience"'],
    ['an issuer that is no URL', { issuers: [{ issuer: 'github', audience: 'a' }] }, '"issuers[0].issuer" must be an http(s) URL'],
    ['a symmetric algorithm', { issuers: [{ issuer: 'https://i.example', audience: 'a', algorithms: ['HS256'] }] }, 'only asymmetric algorithms'],
    ['an issuer twice', { issuers: [{ issuer: 'https://i.example', audience: 'a' }, { issuer: 'https://i.example', audience: 'b' }] }, '"issuers[1].issuer" repeats'],
    ['a user name with a colon', { issuers: [{ issuer: 'https://i.example', audience: 'a' }], username: 'o:idc' }, '"username" must not contain ":"'],
    ['a negative clock tolerance', { issuers: [{ issuer: 'https://i.example', audience: 'a' }], clockToleranceSeconds: -1 }, '"clockToleranceSeconds"'],
  ])('%s', (_name, opts, message) => {
    expect(() => oidcAuthenticator(opts as never)).toThrow(TypeError);
    expect(() => oidcAuthenticator(opts as never)).toThrow(message);
  });
});
