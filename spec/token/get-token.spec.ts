import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { basic, claimsOf, SERVICE, tokenApp } from '../support/token-fixture.js';

describe('GET /token with Basic credentials returns token and access_token (the same JWT), expires_in and issued_at', () => {
  test('the skopeo request shape', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?account=alice&service=${SERVICE}&scope=repository:alice/app:pull`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(200);
    expect(res.body.token).toBe(res.body.access_token);
    expect(res.body.expires_in).toBe(300);
    expect(typeof res.body.issued_at).toBe('string');
    expect(res.body).not.toHaveProperty('refresh_token');
    expect(claimsOf(res.body.token)).toMatchObject({ sub: 'alice', aud: SERVICE, access: [{ type: 'repository', name: 'alice/app', actions: ['pull'] }] });
  });
  test('scope repeats, one resource per parameter', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&scope=repository:alice/a:pull&scope=repository:alice/b:push`).set('Authorization', basic('alice', 'wonderland'));
    expect(claimsOf(res.body.token).access).toEqual([
      { type: 'repository', name: 'alice/a', actions: ['pull'] },
      { type: 'repository', name: 'alice/b', actions: ['push'] },
    ]);
  });
});

describe('GET with offline_token=true returns a refresh token to an authenticated caller (docker login)', () => {
  test('the docker login request shape', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?account=alice&client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(200);
    expect(res.body.refresh_token).toMatch(/^dgr_/);
    expect(claimsOf(res.body.token).access).toEqual([]);
  });
  test('the refresh token then works with the POST refresh grant (docker push/pull)', async () => {
    const { app } = tokenApp();
    const login = await request(app).get(`/token?account=alice&client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic('alice', 'wonderland'));
    const res = await request(app).post('/token').type('form').send({
      client_id: 'docker', grant_type: 'refresh_token', refresh_token: login.body.refresh_token, scope: 'repository:alice/img:push,pull', service: SERVICE,
    });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('repository:alice/img:push,repository:alice/img:pull');
  });
});

describe('GET with bad credentials is 401 with a Basic challenge and a readable message', () => {
  test('wrong password', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'nope'));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="dockgate-spec"');
    expect(res.body).toMatchObject({ error: 'invalid_client', details: 'invalid username or password' });
    expect(res.body.errors).toEqual([{ code: 'UNAUTHORIZED', message: 'invalid username or password' }]);
    expect(res.headers['cache-control']).toBe('no-store');
  });
  test('unknown user', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('mallory', 'x'));
    expect(res.status).toBe(401);
  });
  test.each(['Basic', 'Basic !!!', 'Basic ' + Buffer.from('nocolon').toString('base64'), 'Bearer abc', 'Digest x'])('unusable Authorization %j', async (header) => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', header);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
  });
  test('account must name the authenticated user', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?account=bob&service=${SERVICE}`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('anonymous GET is served only when the host allows it, with an empty subject and no refresh token', () => {
  test('refused by default with 401 and a Basic challenge', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&scope=repository:library/ubuntu:pull`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
  });
  test('allowed: sub is "" and grants follow the authorizer for account ""', async () => {
    const { app } = tokenApp({ allowAnonymous: true });
    const res = await request(app).get(`/token?service=${SERVICE}&scope=repository:library/ubuntu:pull,push&offline_token=true`);
    expect(res.status).toBe(200);
    expect(claimsOf(res.body.token)).toMatchObject({ sub: '', access: [{ type: 'repository', name: 'library/ubuntu', actions: ['pull'] }] });
    expect(res.body).not.toHaveProperty('refresh_token');
  });
});

describe('GET query validation', () => {
  test('service is required', async () => {
    const { app } = tokenApp();
    const res = await request(app).get('/token').set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
  test('offline_token is true or false', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&offline_token=yes`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(400);
  });
  test('a malformed scope is invalid_scope', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&scope=nope`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });
});

describe('the Basic challenge realm is written as a quoted-string', () => {
  test('quotes and backslashes in the realm are escaped', async () => {
    const { app } = tokenApp({ basicRealm: 'my "realm" \\ x' });
    const res = await request(app).get(`/token?service=${SERVICE}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Basic realm="my \\"realm\\" \\\\ x"');
  });
});

describe('GET /token carries scope like POST: the granted scope, empty when nothing was granted', () => {
  test('the granted actions, one type:name:action each', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service=${SERVICE}&scope=repository:alice/app:pull,push`).set('Authorization', basic('alice', 'wonderland'));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('repository:alice/app:pull,repository:alice/app:push');
  });
  test('an empty string when no scope was asked (docker login) or nothing was granted', async () => {
    const { app } = tokenApp();
    const login = await request(app).get(`/token?account=alice&client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic('alice', 'wonderland'));
    expect(login.body).toHaveProperty('scope', '');
    const denied = await request(app).get(`/token?service=${SERVICE}&scope=repository:bob/app:push`).set('Authorization', basic('alice', 'wonderland'));
    expect(denied.body).toHaveProperty('scope', '');
  });
});
