import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { form, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';

const post = (app: Parameters<typeof request>[0], body: string, type = 'application/x-www-form-urlencoded') =>
  request(app).post('/token').set('Content-Type', type).send(body);

function expectOAuthError(res: request.Response, status: number, error: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['pragma']).toBe('no-cache');
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe('string');
}

describe('every token-endpoint answer carries Cache-Control: no-store (RFC 6749 §5.1)', () => {
  test('on success', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant());
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['pragma']).toBe('no-cache');
  });
  test('on GET success', async () => {
    const { app } = tokenApp({ allowAnonymous: true });
    const res = await request(app).get(`/token?service=${SERVICE}`);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('a duplicated single-valued field is invalid_request (RFC 6749 §3.2)', () => {
  test.each(['grant_type', 'service', 'client_id', 'username', 'password', 'access_type'])('%s twice', async (field) => {
    const { app } = tokenApp();
    const base: Record<string, string | string[]> = { grant_type: 'password', service: SERVICE, client_id: 'spec', username: 'alice', password: 'wonderland', access_type: 'online' };
    base[field] = [base[field] as string, base[field] as string];
    const res = await post(app, form(base));
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toContain(field);
  });
  test('scope twice (except for containers/image) is invalid_request: POST scope is sent once, space-separated', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ scope: ['repository:alice/a:pull', 'repository:alice/b:pull'] }));
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('refresh_token twice', async () => {
    const { app } = tokenApp();
    const res = await post(app, form({ grant_type: 'refresh_token', service: SERVICE, client_id: 'spec', refresh_token: ['a', 'b'] }));
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('GET service twice', async () => {
    const { app } = tokenApp({ allowAnonymous: true });
    const res = await request(app).get(`/token?service=${SERVICE}&service=${SERVICE}`);
    expectOAuthError(res, 400, 'invalid_request');
  });
});

describe('required fields: grant_type, service and client_id', () => {
  test.each(['grant_type', 'service', 'client_id'])('missing %s is invalid_request naming it', async (field) => {
    const { app } = tokenApp();
    const fields: Record<string, string> = { grant_type: 'password', service: SERVICE, client_id: 'spec', username: 'alice', password: 'wonderland' };
    delete fields[field];
    const res = await post(app, form(fields));
    expectOAuthError(res, 400, 'invalid_request');
    expect(res.body.error_description).toContain(`"${field}"`);
  });
  test('client_id must be printable ASCII (RFC 6749 Appendix A.1)', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ client_id: 'dock\u00e9r' }));
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('access_type is online or offline', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ access_type: 'forever' }));
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('a service this server does not issue for is invalid_request', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ service: 'elsewhere' }));
    expectOAuthError(res, 400, 'invalid_request');
  });
});

describe('a malformed scope is invalid_scope', () => {
  test.each(['repository', 'repository:a', 'repository:lower/UPPER:pull', 'repository:a/b:pu"sh', 'repository:a/b:pull\r\nX: y'])('%j', async (scope) => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ scope }));
    expect(res.status).toBe(400);
    expect(['invalid_scope', 'invalid_request']).toContain(res.body.error);
    expect(res.headers['x']).toBeUndefined();
  });
});

describe('a malformed body gets an OAuth error, never a 500', () => {
  test('JSON instead of a form', async () => {
    const { app } = tokenApp();
    const res = await post(app, JSON.stringify({ grant_type: 'password' }), 'application/json');
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('no body at all', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token');
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('a body over the limit is 413', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ scope: 'repository:a/b:pull '.repeat(2000) }));
    expectOAuthError(res, 413, 'invalid_request');
  });
  test('too many parameters is 413', async () => {
    const { app } = tokenApp();
    const many = Array.from({ length: 150 }, (_, i) => `p${i}=1`).join('&');
    const res = await post(app, `${passwordGrant()}&${many}`);
    expectOAuthError(res, 413, 'invalid_request');
  });
  test('an unsupported charset is 415', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant(), 'application/x-www-form-urlencoded; charset=koi8-r');
    expectOAuthError(res, 415, 'invalid_request');
  });
  test('bad percent-encoding does not break the endpoint', async () => {
    const { app, errors } = tokenApp();
    const res = await post(app, 'grant_type=password&service=%E0%A4%A&client_id=%ZZ');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(errors).toEqual([]);
  });
  test('an overlong value is invalid_request', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ username: 'a'.repeat(5000) }));
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('a control character in the username is invalid_request', async () => {
    const { app } = tokenApp();
    const res = await post(app, passwordGrant({ username: 'alice\nroot' }));
    expectOAuthError(res, 400, 'invalid_request');
  });
});

describe('only GET and POST are served: other methods get 405 with Allow, so containerd falls back', () => {
  test.each(['put', 'delete', 'patch'] as const)('%s', async (method) => {
    const { app } = tokenApp();
    const res = await request(app)[method]('/token');
    expectOAuthError(res, 405, 'invalid_request');
    expect(res.headers['allow']).toBe('GET, POST');
  });
});

describe('no secret is echoed in any error', () => {
  test('password and refresh token never appear in error bodies', async () => {
    const { app } = tokenApp();
    const bodies = await Promise.all([
      post(app, passwordGrant({ password: 'S3cr3t-P4ss', access_type: 'bogus' })),
      post(app, passwordGrant({ password: 'S3cr3t-P4ss', service: 'elsewhere' })),
      post(app, form({ grant_type: 'refresh_token', service: SERVICE, client_id: 'spec', refresh_token: 'dgr_SECRETSECRET', scope: 'bad' })),
      post(app, passwordGrant({ password: ['S3cr3t-P4ss', 'S3cr3t-P4ss'] })),
    ]);
    for (const res of bodies) {
      expect(res.status).toBe(400);
      expect(res.text).not.toContain('S3cr3t-P4ss');
      expect(res.text).not.toContain('SECRETSECRET');
    }
  });
});

describe('a failing host hook is server_error, reported through onError, without detail to the client', () => {
  test('authenticate throwing', async () => {
    const { app, errors } = tokenApp({ authenticate: async () => { throw new Error('LDAP down at 10.1.2.3'); } });
    const res = await post(app, passwordGrant());
    expectOAuthError(res, 500, 'server_error');
    expect(res.text).not.toContain('LDAP');
    expect(errors).toHaveLength(1);
  });
});
