/**
 * The refresh grant against a real slapd: an LDAP account deleted or disabled after `docker login`
 * loses its refresh tokens (invalid_grant, all revoked), found with the service connection.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import type { Express } from 'express';
import { describeWithPeers, program } from '../../support/peers.js';
import { MemoryRefreshTokenStore } from '../../../lib/index.js';
import { ldapAuthenticator } from '../../../lib/token/authn/ldap/index.js';
import { basic, SERVICE, tokenApp } from '../../support/token-fixture.js';
import { LDAP_ADMIN, LDAP_SERVICE, runProgram, startSlapd, type RunningSlapd } from '../support/index.js';
import { directoryLdif, LDAP_USERS, PEOPLE } from '../fixtures/ldap-directory.js';

const login = async (app: Express, user: string, password: string): Promise<string> => {
  const res = await request(app).get(`/token?account=${user}&client_id=docker&offline_token=true&service=${SERVICE}`).set('Authorization', basic(user, password));
  expect(res.status).toBe(200);
  return res.body.refresh_token as string;
};
const refresh = (app: Express, token: string) => request(app).post('/token').type('form').send({
  client_id: 'docker', grant_type: 'refresh_token', refresh_token: token, scope: 'repository:x/app:pull', service: SERVICE,
});

describeWithPeers('refresh grants ask a real slapd whether the account still exists', [program('slapd', ['-VV']), program('ldapadd', ['-VV'])], () => {
  let ldap: RunningSlapd;
  let app: Express;
  let store: MemoryRefreshTokenStore;
  const admin = (tool: string, args: string[], input?: string) =>
    runProgram(tool, ['-x', '-H', ldap.url, '-D', LDAP_ADMIN.dn, '-w', LDAP_ADMIN.password, ...args], input === undefined ? {} : { input });

  beforeAll(async () => {
    ldap = await startSlapd({ ldif: directoryLdif() });
    store = new MemoryRefreshTokenStore();
    // Disabling is what the filter excludes: here an entry whose description says so.
    ({ app } = tokenApp({
      authenticate: ldapAuthenticator({
        url: ldap.url, bindDN: LDAP_SERVICE.dn, bindPassword: LDAP_SERVICE.password, baseDN: PEOPLE,
        userFilter: '(&(uid=${account})(!(description=disabled)))', timeoutMs: 3000,
      }),
      refreshTokens: { store },
    }));
  });
  afterAll(async () => {
    await ldap?.dispose();
  });

  test('an entry deleted with ldapdelete: 400 invalid_grant, and every refresh token of it revoked', async () => {
    const first = await login(app, 'carol', LDAP_USERS.carol.password);
    const second = await login(app, 'carol', LDAP_USERS.carol.password);
    expect((await refresh(app, first)).status).toBe(200);
    const before = store.size;
    const deleted = await admin('ldapdelete', [`uid=carol,${PEOPLE}`]);
    expect(deleted.code).toBe(0);
    const res = await refresh(app, first);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_grant' });
    expect(store.size).toBe(before - 2);
    expect((await refresh(app, second)).status).toBe(400);
  });

  test('an entry disabled (the user filter no longer matches it): 400 invalid_grant; alice keeps working', async () => {
    const bob = await login(app, 'bob', LDAP_USERS.bob.password);
    const alice = await login(app, 'alice', LDAP_USERS.alice.password);
    expect((await refresh(app, bob)).status).toBe(200);
    const modified = await admin('ldapmodify', [], `dn: uid=bob,${PEOPLE}\nchangetype: modify\nadd: description\ndescription: disabled\n`);
    expect(modified.code).toBe(0);
    expect((await refresh(app, bob)).body).toMatchObject({ error: 'invalid_grant' });
    expect((await refresh(app, alice)).status).toBe(200);
    // Enabled again, bob logs in afresh; the revoked token stays dead.
    await admin('ldapmodify', [], `dn: uid=bob,${PEOPLE}\nchangetype: modify\ndelete: description\n`);
    expect((await refresh(app, bob)).status).toBe(400);
    await login(app, 'bob', LDAP_USERS.bob.password);
  });

  test('slapd down: the refresh grant is 503 with Retry-After, the token is kept', async () => {
    const alice = await login(app, 'alice', LDAP_USERS.alice.password);
    await ldap.stop();
    try {
      const res = await refresh(app, alice);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      await ldap.restart();
    }
    expect((await refresh(app, alice)).status).toBe(200);
  });
});
