import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { AuthenticatorUnavailableError, chainAuthenticators, htpasswdAuthenticator, htpasswdLine, type Authenticator } from '../../../lib/index.js';
import { basic, passwordGrant, SERVICE, tokenApp } from '../../support/token-fixture.js';

/** Host hooks recording that they were asked. */
function recording(verdict: Awaited<ReturnType<Authenticator>> | Error, asked: string[], name: string): Authenticator {
  return async () => {
    asked.push(name);
    if (verdict instanceof Error) throw verdict;
    return verdict;
  };
}

const table = htpasswdAuthenticator({ content: [await htpasswdLine('alice', 'from htpasswd', 4), await htpasswdLine('dana', 'dana pw', 4)].join('\n') });
const ask = (authenticate: Authenticator, username: string, password: string) => authenticate({ username, password, service: SERVICE });

describe('the first authenticator that recognizes the credentials decides', () => {
  test('an identity from the first ends the chain', async () => {
    const asked: string[] = [];
    const chain = chainAuthenticators(recording({ subject: 'a' }, asked, 'first'), recording({ subject: 'b' }, asked, 'second'));
    await expect(ask(chain, 'x', 'y')).resolves.toEqual({ subject: 'a' });
    expect(asked).toEqual(['first']);
  });
  test('null (recognized, wrong password) ends the chain: the next one is not asked', async () => {
    const asked: string[] = [];
    const chain = chainAuthenticators(recording(null, asked, 'first'), recording({ subject: 'b' }, asked, 'second'));
    await expect(ask(chain, 'x', 'y')).resolves.toBeNull();
    expect(asked).toEqual(['first']);
  });
  test('undefined (not mine) passes to the next; none recognizing is undefined', async () => {
    const asked: string[] = [];
    const chain = chainAuthenticators(recording(undefined, asked, 'first'), recording(undefined, asked, 'second'));
    await expect(ask(chain, 'x', 'y')).resolves.toBeUndefined();
    expect(asked).toEqual(['first', 'second']);
  });
  test('an htpasswd user with a wrong password is not tried against the next backend; an unknown one is', async () => {
    const asked: string[] = [];
    const chain = chainAuthenticators(table, recording({ subject: 'from-next' }, asked, 'next'));
    await expect(ask(chain, 'alice', 'guess')).resolves.toBeNull();
    expect(asked).toEqual([]);
    await expect(ask(chain, 'erin', 'pw')).resolves.toEqual({ subject: 'from-next' });
    expect(asked).toEqual(['next']);
  });
  test('arguments are checked at construction', () => {
    expect(() => chainAuthenticators()).toThrow(TypeError);
    expect(() => chainAuthenticators(table, 'ldap' as never)).toThrow('chainAuthenticators argument #1 must be an authenticator function');
  });
});

describe('an outage in one authenticator is the chain\'s answer, not skipped in favour of the next', () => {
  const down = new AuthenticatorUnavailableError('directory down', { retryAfter: 7 });
  test('the next authenticator is not asked', async () => {
    const asked: string[] = [];
    const chain = chainAuthenticators(recording(down, asked, 'ldap'), recording({ subject: 'alice' }, asked, 'htpasswd'));
    await expect(ask(chain, 'alice', 'pw')).rejects.toBe(down);
    expect(asked).toEqual(['ldap']);
  });
  test('through the token router: 503 temporarily_unavailable with the Retry-After of the error, on GET and POST', async () => {
    const { app, errors } = tokenApp({ authenticate: chainAuthenticators(async () => { throw down; }, table) });
    const get = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'from htpasswd'));
    expect(get.status).toBe(503);
    expect(get.headers['retry-after']).toBe('7');
    expect(get.body).toMatchObject({ error: 'temporarily_unavailable' });
    const post = await request(app).post('/token').type('form').send(passwordGrant());
    expect(post.status).toBe(503);
    expect(post.body.error).toBe('temporarily_unavailable');
    expect(errors).toContain(down);
  });
  test('an outage is not counted as a failed login by the throttle', async () => {
    const { app } = tokenApp({ authenticate: async () => { throw down; }, throttle: { maxFailures: 1 } });
    for (let i = 0; i < 3; i++) {
      expect((await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'x'))).status).toBe(503);
    }
  });
  test('any other throw stays a 500 server_error (a bug, not an outage)', async () => {
    const { app } = tokenApp({ authenticate: async () => { throw new Error('bug'); } });
    const res = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('alice', 'x'));
    expect(res.status).toBe(500);
  });
});

describe('the router refuses undefined (no authenticator recognized the credentials) like a wrong password', () => {
  test('GET is 401 with the Basic challenge, POST is invalid_grant', async () => {
    const { app } = tokenApp({ authenticate: chainAuthenticators(table) });
    const get = await request(app).get(`/token?service=${SERVICE}`).set('Authorization', basic('nobody', 'x'));
    expect(get.status).toBe(401);
    expect(get.headers['www-authenticate']).toMatch(/^Basic realm=/);
    const post = await request(app).post('/token').type('form').send(passwordGrant({ username: 'nobody' }));
    expect(post.status).toBe(400);
    expect(post.body.error).toBe('invalid_grant');
  });
});
