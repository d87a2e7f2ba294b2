import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import type { Authenticator } from '../../lib/index.js';
import { basic, claimsOf, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';

/** A host authenticator whose credentials expire `seconds` from now (as an ID token does). */
const expiringIn = (seconds: number): Authenticator => async ({ username }) => ({ subject: username, expiresAt: new Date(Date.now() + seconds * 1000) });

describe('an access token never outlives the credentials it was issued for (Identity.expiresAt)', () => {
  test('expires_in and exp are cut to the credentials\' expiry when that comes before the access-token TTL', async () => {
    const { app } = tokenApp({ authenticate: expiringIn(100) });
    const res = await request(app).get(`/token?service=${SERVICE}&scope=repository:alice/app:pull`).set('Authorization', basic('alice', 'x'));
    expect(res.status).toBe(200);
    expect(res.body.expires_in).toBeGreaterThanOrEqual(98);
    expect(res.body.expires_in).toBeLessThanOrEqual(100);
    const claims = claimsOf(res.body.token);
    expect((claims.exp as number) - (claims.iat as number)).toBe(res.body.expires_in);
    expect(claims.exp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 100);
  });
  test('the configured TTL stays when the credentials live longer', async () => {
    const { app } = tokenApp({ authenticate: expiringIn(3600) });
    const res = await request(app).post('/token').type('form').send(passwordGrant());
    expect(res.body.expires_in).toBe(300);
  });
  test('credentials already expired (or within the second) are refused like wrong ones', async () => {
    const { app } = tokenApp({ authenticate: expiringIn(0) });
    expect((await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'x'))).status).toBe(401);
    expect((await request(app).post('/token').type('form').send(passwordGrant())).body.error).toBe('invalid_grant');
  });
});

describe('expiring credentials get no refresh token: offline requests get the access token only', () => {
  test('GET with offline_token=true (docker login)', async () => {
    const { app, audit } = tokenApp({ authenticate: expiringIn(600) });
    const res = await request(app).get(`/token?account=alice&client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic('alice', 'x'));
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('refresh_token');
    expect(audit).toContainEqual(expect.objectContaining({ type: 'token.issued', refreshTokenIssued: false }));
  });
  test('the password grant with access_type=offline', async () => {
    const { app } = tokenApp({ authenticate: expiringIn(600) });
    const res = await request(app).post('/token').type('form').send(passwordGrant({ access_type: 'offline' }));
    expect(res.status).toBe(200);
    expect(res.body.access_token).toEqual(expect.any(String));
    expect(res.body).not.toHaveProperty('refresh_token');
  });
});
