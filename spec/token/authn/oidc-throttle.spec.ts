/**
 * The login throttle counts OIDC logins per issuer and subject claim, not under the shared user
 * name `oidc`: one CI job's failures do not lock out another behind the same address.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { oidcAuthenticator } from '../../../lib/token/authn/oidc/index.js';
import { startOidcIssuer, type RunningOidcIssuer } from '../../interop/support/oidc-issuer.js';
import { basic, SERVICE, tokenApp } from '../../support/token-fixture.js';

const AUD = 'dockgate-registry';
let idp: RunningOidcIssuer;
beforeAll(async () => {
  idp = await startOidcIssuer({ clients: [AUD] });
});
afterAll(async () => {
  await idp?.stop();
});

const job = (owner: string) => ({ sub: `repo:${owner}/app:ref:refs/heads/main`, repository_owner: owner });

describe('OIDC logins are throttled per issuer and subject claim, with the address window as before', () => {
  const app = () => tokenApp({
    authenticate: oidcAuthenticator({ issuers: [{ issuer: idp.issuer, audience: AUD, account: 'repository_owner' }] }),
    throttle: { maxFailures: 3, maxFailuresPerAddress: 50 },
  }).app;
  const get = (a: ReturnType<typeof app>, token: string) => request(a).get(`/token?service=${SERVICE}`).set('Authorization', basic('oidc', token));

  test('a burst of expired tokens of job acme throttles acme, while job umbrella on the same address still logs in', async () => {
    const a = app();
    const expired = await idp.idToken(AUD, job('acme'), -120);
    for (let i = 0; i < 3; i++) expect((await get(a, expired)).status).toBe(401);
    const throttled = await get(a, expired);
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ error: 'slow_down' });
    // acme's own fresh token waits too (the window is per account, right password or not)…
    expect((await get(a, await idp.idToken(AUD, job('acme')))).status).toBe(429);
    // …but another subject of the same issuer is not locked out.
    expect((await get(a, await idp.idToken(AUD, job('umbrella')))).status).toBe(200);
  });

  test('the address window still holds across subjects', async () => {
    const a = tokenApp({
      authenticate: oidcAuthenticator({ issuers: [{ issuer: idp.issuer, audience: AUD, account: 'repository_owner' }] }),
      throttle: { maxFailures: 3, maxFailuresPerAddress: 4 },
    }).app;
    for (const owner of ['a1', 'a2', 'a3', 'a4']) expect((await get(a, await idp.idToken(AUD, job(owner), -120))).status).toBe(401);
    expect((await get(a, await idp.idToken(AUD, job('a5')))).status).toBe(429);
  });

  test('a password that is no ID token is counted under the user name, as any login', async () => {
    const a = app();
    for (let i = 0; i < 3; i++) expect((await get(a, 'not a jwt')).status).toBe(401);
    expect((await get(a, 'not a jwt')).status).toBe(429);
    expect((await get(a, await idp.idToken(AUD, job('acme')))).status).toBe(200);
  });
});
