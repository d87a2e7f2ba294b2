import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { claimsOf, form, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';

const post = (app: Parameters<typeof request>[0], body: string) =>
  request(app).post('/token').type('application/x-www-form-urlencoded').send(body);

describe('rule 1: the password grant with access_type=offline returns a refresh token and an access token', () => {
  test('both tokens are in the answer, with the required fields', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ access_type: 'offline', scope: 'repository:alice/app:pull' }));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(typeof res.body.access_token).toBe('string');
    expect(res.body.refresh_token).toMatch(/^dgr_[A-Za-z0-9_-]{43}$/);
    expect(res.body.token_type).toBe('Bearer');
    expect(Number.isInteger(res.body.expires_in)).toBe(true);
    expect(res.body.issued_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(res.body.scope).toBe('repository:alice/app:pull');
  });
  test('refresh tokens are long and unique', async () => {
    const { app } = tokenApp();
    const a = await post(app, passwordGrant({ access_type: 'offline' }));
    const b = await post(app, passwordGrant({ access_type: 'offline' }));
    // 32 random bytes = 256 bits behind the prefix.
    expect(Buffer.from(a.body.refresh_token.slice(4), 'base64url')).toHaveLength(32);
    expect(a.body.refresh_token).not.toBe(b.body.refresh_token);
  });
});

describe('rule 2: with access_type absent or online there is no refresh token', () => {
  test.each([[{}], [{ access_type: 'online' }]])('%j', async (extra) => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant(extra as Record<string, string>));
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBeDefined();
    expect(res.body).not.toHaveProperty('refresh_token');
  });
});

describe('rule 3: the refresh_token grant returns an access token limited to the requested scope, and repeats the same refresh token', () => {
  test('scope of the refresh grant is the new request, not the one that created the token', async () => {
    const { app } = tokenApp();
    const first = await post(app, passwordGrant({ access_type: 'offline', scope: '' }));
    const res = await post(app, form({
      grant_type: 'refresh_token', refresh_token: first.body.refresh_token, service: SERVICE, client_id: 'spec',
      scope: 'repository:alice/app:pull,push',
    }));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('repository:alice/app:pull,repository:alice/app:push');
    expect(claimsOf(res.body.access_token)).toMatchObject({ sub: 'alice', access: [{ type: 'repository', name: 'alice/app', actions: ['pull', 'push'] }] });
    expect(res.body).not.toHaveProperty('refresh_token');
  });
  test('with access_type=offline the same refresh token comes back, never a new one', async () => {
    const { app } = tokenApp();
    const first = await post(app, passwordGrant({ access_type: 'offline' }));
    const res = await post(app, form({
      grant_type: 'refresh_token', refresh_token: first.body.refresh_token, service: SERVICE, client_id: 'spec', access_type: 'offline',
    }));
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBe(first.body.refresh_token);
  });
  test('a refresh token is good only for the service it was issued for', async () => {
    const { app, audit } = tokenApp({ service: [SERVICE, 'other.registry'] });
    const first = await post(app, passwordGrant({ access_type: 'offline' }));
    const res = await post(app, form({ grant_type: 'refresh_token', refresh_token: first.body.refresh_token, service: 'other.registry', client_id: 'spec' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    // The client is told nothing more; the audit says which check failed, and from where.
    expect(res.body.error_description).toBe('the refresh token is invalid, expired or revoked');
    expect(audit.at(-1)).toEqual({
      type: 'refresh.refused', grant: 'refresh_token', account: 'alice', service: 'other.registry', clientId: 'spec',
      ip: expect.any(String), reason: 'refresh token issued for another service', error: 'invalid_grant',
    });
  });
  test('an unknown refresh token is invalid_grant and is not echoed', async () => {
    const { app } = tokenApp();
    const res = await post(app, form({ grant_type: 'refresh_token', refresh_token: 'dgr_not-a-real-token', service: SERVICE, client_id: 'spec' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(JSON.stringify(res.body)).not.toContain('dgr_not-a-real-token');
  });
  test('a missing refresh_token is invalid_request', async () => {
    const { app } = tokenApp();
    const res = await post(app, form({ grant_type: 'refresh_token', service: SERVICE, client_id: 'spec' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
  test('with bindClientId, another client_id cannot use the token; by default it can (Docker config is shared by skopeo and containerd)', async () => {
    const bound = tokenApp({ refreshTokens: { bindClientId: true } });
    const t1 = (await post(bound.app, passwordGrant({ access_type: 'offline', client_id: 'docker' }))).body.refresh_token;
    const refused = await post(bound.app, form({ grant_type: 'refresh_token', refresh_token: t1, service: SERVICE, client_id: 'containers/image' }));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
    const free = tokenApp();
    const t2 = (await post(free.app, passwordGrant({ access_type: 'offline', client_id: 'docker' }))).body.refresh_token;
    const ok = await post(free.app, form({ grant_type: 'refresh_token', refresh_token: t2, service: SERVICE, client_id: 'containers/image' }));
    expect(ok.status).toBe(200);
  });
});

describe('rule 4: a scope with several actions comes back expanded, one entry per action, comma-joined', () => {
  test('repository:a/b:pull,push', async () => {
    const { app } = tokenApp({ authorize: ({ scopes }) => scopes });
    const res = await post(app, passwordGrant({ scope: 'repository:a/b:pull,push' }));
    expect(res.body.scope).toBe('repository:a/b:pull,repository:a/b:push');
  });
  test('several resources, space-separated in the request', async () => {
    const { app } = tokenApp({ authorize: ({ scopes }) => scopes });
    const res = await post(app, passwordGrant({ scope: 'repository:a/b:pull repository:c/d:push,pull' }));
    expect(res.body.scope).toBe('repository:a/b:pull,repository:c/d:push,repository:c/d:pull');
  });
  test('the scope field is always present, empty when nothing was granted', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ scope: 'repository:bob/secret:pull' }));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('');
    expect(claimsOf(res.body.access_token).access).toEqual([]);
  });
});

describe('rule 5: expires_in is never below 60', () => {
  test('the default lifetime is 300 seconds and matches the token', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant());
    expect(res.body.expires_in).toBe(300);
    const claims = claimsOf(res.body.access_token);
    expect((claims.exp as number) - (claims.iat as number)).toBe(300);
  });
  test('a lifetime under 60 seconds is refused at construction', () => {
    expect(() => tokenApp({ accessTokenTtl: 59 })).toThrow(/accessTokenTtl/);
  });
  test('60 seconds is allowed', async () => {
    const { app } = tokenApp({ accessTokenTtl: 60 });
    expect((await post(app, passwordGrant())).body.expires_in).toBe(60);
  });
});

describe('grants are the intersection of what was asked and what the host allows, never an error', () => {
  test('actions the host does not allow are dropped', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ scope: 'repository:library/ubuntu:pull,push repository:bob/x:pull' }));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('repository:library/ubuntu:pull');
  });
  test('an authorizer granting more than asked is cut down to the request', async () => {
    const { app } = tokenApp({
      authorize: () => [
        { type: 'repository', name: 'alice/app', actions: ['pull', 'push', 'delete'] },
        { type: 'repository', name: 'alice/other', actions: ['*'] },
      ],
    });
    const res = await post(app, passwordGrant({ scope: 'repository:alice/app:pull' }));
    expect(claimsOf(res.body.access_token).access).toEqual([{ type: 'repository', name: 'alice/app', actions: ['pull'] }]);
  });
  test('a * grant stands for every requested action', async () => {
    const { app } = tokenApp({ authorize: ({ scopes }) => scopes.map((s) => ({ ...s, actions: ['*'] })) });
    const res = await post(app, passwordGrant({ scope: 'repository:a/b:pull,push' }));
    expect(res.body.scope).toBe('repository:a/b:pull,repository:a/b:push');
  });
  test('the same resource asked twice is merged into one access entry', async () => {
    const { app } = tokenApp({ authorize: ({ scopes }) => scopes });
    const res = await post(app, passwordGrant({ scope: 'repository:a/b:pull repository:a/b:push' }));
    expect(claimsOf(res.body.access_token).access).toEqual([{ type: 'repository', name: 'a/b', actions: ['pull', 'push'] }]);
  });
});

describe('authorization_code is reserved: unsupported_grant_type', () => {
  test.each(['authorization_code', 'client_credentials', 'urn:x'])('%s', async (grant) => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ grant_type: grant }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_grant_type');
  });
});

describe('the password grant checks credentials', () => {
  test('a wrong password is invalid_grant (400) with a message Docker can print', async () => {
    const { app, audit } = tokenApp();
    const res = await post(app, passwordGrant({ password: 'nope' }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_grant', error_description: 'invalid username or password', details: 'invalid username or password' });
    expect(res.body.errors[0].message).toBe('invalid username or password');
    expect(JSON.stringify(res.body)).not.toContain('nope');
    expect(audit.at(-1)).toMatchObject({ type: 'login.failed', account: 'alice' });
    expect(JSON.stringify(audit)).not.toContain('nope');
  });
  test('username and password are required', async () => {
    const { app } = tokenApp();
    const res = await post(app, form({ grant_type: 'password', service: SERVICE, client_id: 'spec', username: 'alice' }));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('the containerd request shape is accepted', () => {
  test('Content-Type with ; charset=utf-8 and client_id containerd-client', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', 'application/x-www-form-urlencoded; charset=utf-8')
      .send(passwordGrant({ client_id: 'containerd-client', scope: 'repository:alice/app:pull' }));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('repository:alice/app:pull');
  });
  test('containers/image may repeat scope in its refresh grant', async () => {
    const { app } = tokenApp();
    const refresh = (await post(app, passwordGrant({ access_type: 'offline' }))).body.refresh_token;
    const res = await post(app, form({
      grant_type: 'refresh_token', refresh_token: refresh, service: SERVICE, client_id: 'containers/image',
      scope: ['repository:alice/a:pull', 'repository:alice/b:pull'],
    }));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('repository:alice/a:pull,repository:alice/b:pull');
  });
});

describe('audit: who got what, for which service and client_id, never the secrets', () => {
  test('an issued token is audited without password or tokens', async () => {
    const { app, audit } = tokenApp();
    const res = await post(app, passwordGrant({ access_type: 'offline', client_id: 'docker', scope: 'repository:alice/app:pull' }));
    expect(audit.at(-1)).toEqual({
      type: 'token.issued', grant: 'password', account: 'alice', service: SERVICE, clientId: 'docker', ip: expect.any(String),
      requested: 'repository:alice/app:pull', granted: 'repository:alice/app:pull', refreshTokenIssued: true,
    });
    const text = JSON.stringify(audit);
    expect(text).not.toContain('wonderland');
    expect(text).not.toContain(res.body.refresh_token);
    expect(text).not.toContain(res.body.access_token);
  });
});

describe('an audit hook that throws does not fail the request; its error goes to onError', () => {
  test('the token is still issued', async () => {
    const { app, errors } = tokenApp({ audit: () => { throw new Error('audit sink down'); } });
    const res = await post(app, passwordGrant({ access_type: 'offline' }));
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toBeDefined();
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('audit sink down');
  });
});
