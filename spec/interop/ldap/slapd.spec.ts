/**
 * ldapAuthenticator against a real OpenLDAP slapd (search-then-bind, escaping, groups, TLS,
 * outages), without a registry: the authenticator is called as the token router calls it.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { Client } from 'ldapts';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program } from '../../support/peers.js';
import { AuthenticatorUnavailableError } from '../../../lib/index.js';
import { ldapAuthenticator, type LdapAuthenticatorOptions } from '../../../lib/token/authn/ldap/index.js';
import { LDAP_SERVICE, makeTlsFiles, startSlapd, type RunningSlapd } from '../support/index.js';
import { directoryLdif, GROUPS, LDAP_USERS, PEOPLE } from '../fixtures/ldap-directory.js';

const ask = (authenticate: ReturnType<typeof ldapAuthenticator>, username: string, password: string) =>
  authenticate({ username, password, service: 'registry.test' });

describeWithPeers('ldapAuthenticator against a real slapd', [program('slapd', ['-VV']), program('ldapadd', ['-VV']), program('openssl', ['version'])], () => {
  let ldap: RunningSlapd;
  let tlsDir: string;
  let caPem: string;
  const warnings: Error[] = [];
  const base = (): LdapAuthenticatorOptions => ({
    url: ldap.url, bindDN: LDAP_SERVICE.dn, bindPassword: LDAP_SERVICE.password, baseDN: PEOPLE,
    groupAttribute: 'memberOf', timeoutMs: 3000, onError: (e) => warnings.push(e),
  });

  beforeAll(async () => {
    tlsDir = await mkdtemp(join(tmpdir(), 'dockgate-ldap-tls-'));
    const tls = await makeTlsFiles(tlsDir);
    caPem = tls.caPem;
    ldap = await startSlapd({ ldif: directoryLdif(), tls });
  });
  afterAll(async () => {
    await ldap?.dispose();
    if (tlsDir) await rm(tlsDir, { recursive: true, force: true });
  });

  describe('search-then-bind decides with the directory\'s own password check', () => {
    test('the right password gives the user, with memberOf groups as the groups label', async () => {
      const authenticate = ldapAuthenticator(base());
      await expect(ask(authenticate, 'alice', LDAP_USERS.alice.password)).resolves.toEqual({ subject: 'alice', labels: { groups: ['team-red', 'admins'] } });
      await expect(ask(authenticate, 'carol', LDAP_USERS.carol.password)).resolves.toEqual({ subject: 'carol', labels: { groups: [] } });
    });
    test('a wrong password is null; an unknown user is undefined (not this directory\'s)', async () => {
      const authenticate = ldapAuthenticator(base());
      await expect(ask(authenticate, 'alice', LDAP_USERS.bob.password)).resolves.toBeNull();
      await expect(ask(authenticate, 'mallory', 'anything')).resolves.toBeUndefined();
    });
    test('an empty password is refused, never an anonymous bind success (RFC 4513 §5.1.2)', async () => {
      // The danger is real: this slapd (allow bind_anon_dn, as AD does) answers a bind with a DN and no password as success.
      const raw = new Client({ url: ldap.url });
      await expect(raw.bind(`uid=alice,${PEOPLE}`, '')).resolves.toBeUndefined();
      await raw.unbind();
      const authenticate = ldapAuthenticator(base());
      await expect(ask(authenticate, 'alice', '')).resolves.toBeNull();
    });
    test('filter syntax in the user name is escaped (RFC 4515): *)(uid=* and * match nothing', async () => {
      const authenticate = ldapAuthenticator(base());
      for (const name of ['*', '*)(uid=*', 'alice)(|(uid=*', 'al*', '\\2a']) {
        await expect(ask(authenticate, name, LDAP_USERS.alice.password)).resolves.toBeUndefined();
      }
      expect(warnings).toEqual([]);
    });
    test('accountAttribute makes the directory\'s spelling the subject (LDAP matching ignores case)', async () => {
      const authenticate = ldapAuthenticator({ ...base(), accountAttribute: 'uid' });
      await expect(ask(authenticate, 'ALICE', LDAP_USERS.alice.password)).resolves.toMatchObject({ subject: 'alice' });
    });
    test('labelAttributes become labels', async () => {
      const authenticate = ldapAuthenticator({ ...base(), labelAttributes: { mail: 'mail' } });
      await expect(ask(authenticate, 'bob', LDAP_USERS.bob.password)).resolves.toEqual({ subject: 'bob', labels: { mail: ['bob@dockgate.test'], groups: ['team-blue'] } });
    });
    test('groups can come from a group search (groupOfNames member=DN) instead of memberOf', async () => {
      const { groupAttribute: _unused, ...rest } = base();
      const authenticate = ldapAuthenticator({ ...rest, groupSearch: { baseDN: GROUPS } });
      const identity = await ask(authenticate, 'alice', LDAP_USERS.alice.password);
      expect(identity?.labels?.groups?.slice().sort()).toEqual(['admins', 'team-red']);
    });
    test('a filter matching several entries refuses the login and says so through onError', async () => {
      const seen: Error[] = [];
      const authenticate = ldapAuthenticator({ ...base(), userFilter: '(|(uid=${account})(objectClass=inetOrgPerson))', onError: (e) => seen.push(e) });
      await expect(ask(authenticate, 'alice', LDAP_USERS.alice.password)).resolves.toBeNull();
      expect(seen.map((e) => e.message)).toEqual([expect.stringContaining('matched more than one entry')]);
    });
  });

  describe('TLS: ldaps:// and StartTLS verify the server against the given CA', () => {
    test('ldaps:// with the CA logs in', async () => {
      const authenticate = ldapAuthenticator({ ...base(), url: ldap.ldapsUrl!, tls: { ca: caPem } });
      await expect(ask(authenticate, 'bob', LDAP_USERS.bob.password)).resolves.toMatchObject({ subject: 'bob' });
    });
    test('StartTLS on ldap:// with the CA logs in', async () => {
      const authenticate = ldapAuthenticator({ ...base(), tls: { ca: caPem, startTLS: true } });
      await expect(ask(authenticate, 'bob', LDAP_USERS.bob.password)).resolves.toMatchObject({ subject: 'bob' });
    });
    test('a server certificate the CA does not vouch for is an outage (503), never a login', async () => {
      const authenticate = ldapAuthenticator({ ...base(), url: ldap.ldapsUrl! });
      await expect(ask(authenticate, 'bob', LDAP_USERS.bob.password)).rejects.toBeInstanceOf(AuthenticatorUnavailableError);
      const startTls = ldapAuthenticator({ ...base(), tls: { startTLS: true } });
      await expect(ask(startTls, 'bob', LDAP_USERS.bob.password)).rejects.toBeInstanceOf(AuthenticatorUnavailableError);
    });
  });

  describe('a directory that is down or slow is AuthenticatorUnavailableError, never null', () => {
    test('a wrong service password is an outage (misconfiguration), not the user\'s wrong password', async () => {
      const authenticate = ldapAuthenticator({ ...base(), bindPassword: 'not it' });
      await expect(ask(authenticate, 'alice', LDAP_USERS.alice.password)).rejects.toBeInstanceOf(AuthenticatorUnavailableError);
    });
    test('the kept service connection survives a slapd restart: down is unavailable, back up logs in again', async () => {
      const authenticate = ldapAuthenticator(base());
      await expect(ask(authenticate, 'alice', LDAP_USERS.alice.password)).resolves.toMatchObject({ subject: 'alice' });
      await ldap.stop();
      const down = await ask(authenticate, 'alice', LDAP_USERS.alice.password).catch((e: unknown) => e);
      expect(down).toBeInstanceOf(AuthenticatorUnavailableError);
      expect((down as AuthenticatorUnavailableError).retryAfter).toBe(5);
      await ldap.restart();
      await expect(ask(authenticate, 'alice', LDAP_USERS.alice.password)).resolves.toMatchObject({ subject: 'alice' });
    });
    test('a server that accepts but never answers is given up after timeoutMs', async () => {
      const sockets: Socket[] = [];
      const silent: Server = createServer((s) => sockets.push(s));
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const port = (silent.address() as { port: number }).port;
      try {
        const authenticate = ldapAuthenticator({ ...base(), url: `ldap://127.0.0.1:${port}`, timeoutMs: 500 });
        const started = Date.now();
        await expect(ask(authenticate, 'alice', 'x')).rejects.toThrow(/did not answer within 500 ms|timeout/i);
        expect(Date.now() - started).toBeLessThan(2500);
      } finally {
        for (const s of sockets) s.destroy();
        silent.close();
      }
    });
  });
});
