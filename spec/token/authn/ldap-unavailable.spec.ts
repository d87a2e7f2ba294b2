import { describe, expect, test } from '@jest/globals';
import { createServer, type Socket } from 'node:net';
import request from 'supertest';
import { ldapAuthenticator } from '../../../lib/token/authn/ldap/index.js';
import { basic, passwordGrant, SERVICE, tokenApp } from '../../support/token-fixture.js';

/** A TCP port on which nothing listens any more. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('a directory that cannot be reached is 503 temporarily_unavailable with Retry-After, never 401 or 500', () => {
  test('connection refused: GET and the password grant', async () => {
    const { app, errors } = tokenApp({ authenticate: ldapAuthenticator({ url: `ldap://127.0.0.1:${await closedPort()}`, baseDN: 'dc=x', retryAfter: 3 }) });
    const get = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'pw'));
    expect(get.status).toBe(503);
    expect(get.headers['retry-after']).toBe('3');
    expect(get.body).toMatchObject({ error: 'temporarily_unavailable' });
    const post = await request(app).post('/token').type('form').send(passwordGrant());
    expect(post.status).toBe(503);
    expect(errors.map((e) => (e as Error).message).join('\n')).toMatch(/LDAP server 127\.0\.0\.1:\d+ is unreachable/);
    expect(errors.map((e) => (e as Error).message).join('\n')).not.toContain('wonderland');
  });
  test('a server that accepts and never answers: 503 once timeoutMs has passed, not a hang', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const { app } = tokenApp({ authenticate: ldapAuthenticator({ url: `ldap://127.0.0.1:${(silent.address() as { port: number }).port}`, baseDN: 'dc=x', timeoutMs: 300 }) });
      const started = Date.now();
      const res = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'pw'));
      expect(res.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });
  test('an empty password during an outage is 503 too: whether the user is the directory\'s (and so whether a later backend may decide) cannot be known', async () => {
    const { app } = tokenApp({ authenticate: ldapAuthenticator({ url: `ldap://127.0.0.1:${await closedPort()}`, baseDN: 'dc=x' }) });
    const res = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', ''));
    expect(res.status).toBe(503);
  });
});
