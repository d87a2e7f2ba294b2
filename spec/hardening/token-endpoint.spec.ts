/**
 * Hardening of the token endpoint: every malformed form, header or query gets RFC 6749 §5.2
 * JSON with the right status, never a 500, and no secret comes back or reaches onError/audit.
 */
import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { basic, form, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';
import { expectOAuthError } from './support.js';

const FORM = 'application/x-www-form-urlencoded';
const SECRET = 'wonderland';

describe('POST /token: a body the form parser cannot read is invalid_request with its status, never server_error', () => {
  test('gzip Content-Encoding with bytes that are not gzip is 400 invalid_request', async () => {
    const { app, errors } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', FORM).set('Content-Encoding', 'gzip').send(Buffer.from('grant_type=password'));
    expectOAuthError(res, 400, 'invalid_request');
    expect(errors).toEqual([]);
  });
  test('a truncated brotli body is 400 invalid_request', async () => {
    const { app, errors } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', FORM).set('Content-Encoding', 'br').send(Buffer.from('a=1'));
    expectOAuthError(res, 400, 'invalid_request');
    expect(errors).toEqual([]);
  });
  test('a gzip body that inflates beyond maxBodyBytes is 413 (the limit counts inflated bytes)', async () => {
    const { app } = tokenApp();
    const bomb = gzipSync(Buffer.from(`grant_type=password&x=${'a'.repeat(1_000_000)}`));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST', body: bomb, headers: { 'Content-Type': FORM, 'Content-Encoding': 'gzip' } });
      expectOAuthError({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.json() }, 413, 'invalid_request');
    } finally {
      server.close();
    }
  });
  test('an unknown Content-Encoding is 415', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', FORM).set('Content-Encoding', 'x-weird').send('a=1');
    expectOAuthError(res, 415, 'invalid_request');
  });
  test('a charset other than utf-8 is 415', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', `${FORM}; charset=latin1`).send('a=1');
    expectOAuthError(res, 415, 'invalid_request');
  });
  test('a body larger than maxBodyBytes is 413', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', FORM).send(`x=${'a'.repeat(20_000)}`);
    expectOAuthError(res, 413, 'invalid_request');
  });
  test('more than 100 fields is 413', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', FORM).send(Array.from({ length: 150 }, (_, i) => `f${i}=1`).join('&'));
    expectOAuthError(res, 413, 'invalid_request');
  });
  test('JSON, text and a missing Content-Type are 400 invalid_request', async () => {
    const { app } = tokenApp();
    for (const [type, body] of [['application/json', '{"grant_type":"password"}'], ['text/plain', 'grant_type=password'], [undefined, 'grant_type=password']] as const) {
      const req = request(app).post('/token');
      if (type) req.set('Content-Type', type);
      expectOAuthError(await req.send(body), 400, 'invalid_request');
    }
  });
  test('bad percent escapes and bare "%" are read leniently, then the missing fields are invalid_request', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/token').set('Content-Type', FORM).send('grant_type=%ZZ&service=%&client_id=%E0%A4%A');
    expect([400]).toContain(res.status);
    expect(['invalid_request', 'unsupported_grant_type']).toContain(res.body.error);
  });
});

describe('POST /token: each malformed field is invalid_request (or invalid_scope) naming the field, never echoing its value', () => {
  const cases: [string, string, string][] = [
    ['repeated grant_type', passwordGrant({ grant_type: ['password', 'password'] }), 'invalid_request'],
    ['client_id with a non-ASCII character', passwordGrant({ client_id: 'caf\u00e9' }), 'invalid_request'],
    ['client_id with CR LF', passwordGrant({ client_id: 'a\r\nb' }), 'invalid_request'],
    ['service with a NUL', passwordGrant({ service: `${SERVICE}\u0000` }), 'invalid_request'],
    ['username with CR LF', passwordGrant({ username: 'alice\r\nX-Injected: 1' }), 'invalid_request'],
    ['access_type neither online nor offline', passwordGrant({ access_type: 'forever' }), 'invalid_request'],
    ['a 5000-character password', passwordGrant({ password: 'p'.repeat(5000) }), 'invalid_request'],
    ['scope with CR LF', passwordGrant({ scope: 'repository:alice/app:pull\r\nX: y' }), 'invalid_scope'],
    ['scope with unicode in the name', passwordGrant({ scope: 'repository:alice/\u00e4pp:pull' }), 'invalid_scope'],
    ['scope with a ".." component', passwordGrant({ scope: 'repository:alice/../bob:pull' }), 'invalid_scope'],
    ['scope with two parts', passwordGrant({ scope: 'repository:alice' }), 'invalid_scope'],
    ['scope longer than 1024 characters', passwordGrant({ scope: `repository:alice/${'a'.repeat(1100)}:pull` }), 'invalid_scope'],
    ['grant_type authorization_code', passwordGrant({ grant_type: 'authorization_code' }), 'unsupported_grant_type'],
    ['refresh grant without a refresh_token', form({ grant_type: 'refresh_token', service: SERVICE, client_id: 'c' }), 'invalid_request'],
  ];
  for (const [what, body, error] of cases) {
    test(`${what} is 400 ${error}`, async () => {
      const { app, errors } = tokenApp();
      const res = await request(app).post('/token').set('Content-Type', FORM).send(body);
      expectOAuthError(res, 400, error);
      expect(res.text).not.toContain(SECRET);
      expect(errors).toEqual([]);
    });
  }
  test('an unknown refresh token is invalid_grant and is not echoed', async () => {
    const { app } = tokenApp();
    const token = `dgr_${'Q'.repeat(43)}`;
    const res = await request(app).post('/token').set('Content-Type', FORM).send(form({ grant_type: 'refresh_token', service: SERVICE, client_id: 'c', refresh_token: token }));
    expectOAuthError(res, 400, 'invalid_grant');
    expect(res.text).not.toContain(token);
  });
});

describe('GET /token: malformed Authorization headers and queries get the protocol answer', () => {
  const cases: [string, string][] = [
    ['Basic with characters outside base64', 'Basic !!!'],
    ['Basic without a colon in the decoded value', `Basic ${Buffer.from('alice').toString('base64')}`],
    ['Basic with an empty user name', `Basic ${Buffer.from(':wonderland').toString('base64')}`],
    ['Basic with a control character in the user name', `Basic ${Buffer.from('al\u0001ice:wonderland').toString('base64')}`],
    ['Bearer instead of Basic', 'Bearer abc'],
    ['Basic with two credentials', `Basic ${Buffer.from('a:b').toString('base64')} ${Buffer.from('c:d').toString('base64')}`],
  ];
  for (const [what, header] of cases) {
    test(`${what} is 401 invalid_client with a Basic challenge`, async () => {
      const { app, errors } = tokenApp();
      const res = await request(app).get('/token').query({ service: SERVICE }).set('Authorization', header);
      expectOAuthError(res, 401, 'invalid_client');
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="/);
      expect(errors).toEqual([]);
    });
  }
  test('a user name that is not UTF-8 is an ordinary failed login (401), not a crash', async () => {
    const { app } = tokenApp();
    const header = `Basic ${Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(':x')]).toString('base64')}`;
    const res = await request(app).get('/token').query({ service: SERVICE }).set('Authorization', header);
    expectOAuthError(res, 401, 'invalid_client');
  });
  test('a repeated service, a bad offline_token and a mismatched account are 400 invalid_request', async () => {
    const { app } = tokenApp();
    for (const query of [`service=${SERVICE}&service=${SERVICE}`, `service=${SERVICE}&offline_token=yes`, `service=${SERVICE}&account=bob`, 'service=other', '']) {
      const res = await request(app).get(`/token?${query}`).set('Authorization', basic('alice', SECRET));
      expectOAuthError(res, 400, 'invalid_request');
      expect(res.text).not.toContain(SECRET);
    }
  });
  test('bracketed query names are plain names (no nested objects), so service[x] does not count as service', async () => {
    const { app } = tokenApp();
    const res = await request(app).get(`/token?service[x]=${SERVICE}`).set('Authorization', basic('alice', SECRET));
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('malformed scopes (bad escapes, unicode, CR LF, percent-encoded slash) are 400 invalid_scope', async () => {
    const { app } = tokenApp();
    for (const scope of ['%ZZ', 'repository:%E2%82%AC:pull', 'repository:a%0D%0Ab:pull', 'repository:alice%2F..%2Fbob:pull', 'repository::pull']) {
      const res = await request(app).get(`/token?service=${SERVICE}&scope=${scope}`).set('Authorization', basic('alice', SECRET));
      expectOAuthError(res, 400, 'invalid_scope');
    }
  });
});

describe('the token router answers other methods with 405 and Allow, in the OAuth error shape', () => {
  test('PUT /token and GET /revoke are 405 with Allow', async () => {
    const { app } = tokenApp();
    const put = await request(app).put('/token');
    expectOAuthError(put, 405, 'invalid_request');
    expect(put.headers.allow).toBe('GET, POST');
    const get = await request(app).get('/revoke');
    expectOAuthError(get, 405, 'invalid_request');
    expect(get.headers.allow).toBe('POST');
  });
  test('POST and DELETE /jwks are 405 with Allow: GET, HEAD', async () => {
    const { app } = tokenApp();
    for (const method of ['post', 'delete'] as const) {
      const res = await request(app)[method]('/jwks');
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    }
  });
  test('HEAD /jwks is 200 without a body', async () => {
    const { app } = tokenApp();
    const res = await request(app).head('/jwks');
    expect(res.status).toBe(200);
  });
});

describe('POST /revoke: malformed requests are invalid_request, unknown tokens 200 (RFC 7009 §2.2)', () => {
  test('a missing, empty, repeated or oversized token is 400 invalid_request', async () => {
    const { app } = tokenApp();
    for (const body of ['', 'token=', 'token=a&token=b', `token=${'x'.repeat(5000)}`]) {
      const res = await request(app).post('/revoke').set('Content-Type', FORM).send(body);
      expectOAuthError(res, 400, 'invalid_request');
    }
  });
  test('a JSON body is 400 invalid_request', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/revoke').set('Content-Type', 'application/json').send('{"token":"x"}');
    expectOAuthError(res, 400, 'invalid_request');
  });
  test('garbage gzip is 400 invalid_request', async () => {
    const { app, errors } = tokenApp();
    const res = await request(app).post('/revoke').set('Content-Type', FORM).set('Content-Encoding', 'deflate').send(Buffer.from('token=x'));
    expectOAuthError(res, 400, 'invalid_request');
    expect(errors).toEqual([]);
  });
  test('an unknown token with an unknown hint is 200', async () => {
    const { app } = tokenApp();
    const res = await request(app).post('/revoke').set('Content-Type', FORM).send('token=nope&token_type_hint=%00weird');
    expect(res.status).toBe(200);
  });
});

describe('no secret reaches a response, the audit hook or onError, whatever the failure', () => {
  test('wrong password, throttled, bad scope and refresh-token failures never carry the password or token', async () => {
    const { app, audit, errors } = tokenApp({ throttle: { maxFailures: 2 } });
    const bad = 'hunter2-not-the-password';
    const bodies = [
      passwordGrant({ password: bad }),
      passwordGrant({ password: bad }),
      passwordGrant({ password: bad }),
      passwordGrant({ scope: 'repository:x y:pull' }),
      form({ grant_type: 'refresh_token', service: SERVICE, client_id: 'c', refresh_token: `dgr_${bad}` }),
    ];
    const texts: string[] = [];
    for (const body of bodies) texts.push((await request(app).post('/token').set('Content-Type', FORM).send(body)).text);
    const seen = JSON.stringify({ texts, audit, errors: errors.map(String) });
    expect(seen).not.toContain(bad);
    expect(seen).not.toContain(SECRET);
  });
});
