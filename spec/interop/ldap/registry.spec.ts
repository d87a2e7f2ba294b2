/**
 * LDAP users through the whole chain real clients use: Docker CLI 28 → registry 2.8 → dockgate's
 * token service → OpenLDAP slapd, with a group ACL deciding pushes to team namespaces.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { dockerd, dockerImage, describeWithPeers, program } from '../../support/peers.js';
import { aclAuthorizer, generateSigningKey, ownNamespaceAcl } from '../../../lib/index.js';
import { ldapAuthenticator } from '../../../lib/token/authn/ldap/index.js';
import {
  dockerCli, LDAP_SERVICE, startRegistry, startSlapd, startTokenServer,
  type DockerCli, type ProgramResult, type RunningRegistry, type RunningSlapd, type RunningTokenServer,
} from '../support/index.js';
import { directoryLdif, LDAP_USERS, PEOPLE } from '../fixtures/ldap-directory.js';

const SERVICE = 'registry.ldap.test';
const ISSUER = 'dockgate-ldap-interop';
const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const expectSuccess = (r: ProgramResult) => expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describeWithPeers('LDAP users with docker login, push and pull through registry 2.8', [
  dockerd(), program('docker-registry', ['--version']), program('slapd', ['-VV']), program('ldapadd', ['-VV']), dockerImage('busybox:local'),
], () => {
  let ldap: RunningSlapd;
  let token: RunningTokenServer;
  let registry: RunningRegistry;
  const clis: DockerCli[] = [];
  const tagged: string[] = [];

  async function loggedIn(user: keyof typeof LDAP_USERS): Promise<DockerCli> {
    const cli = await dockerCli();
    clis.push(cli);
    expectSuccess(await cli.docker(['login', registry.host, '-u', user, '--password-stdin'], { input: LDAP_USERS[user].password }));
    return cli;
  }

  async function push(cli: DockerCli, repository: string): Promise<ProgramResult> {
    const ref = `${registry.host}/${repository}:1`;
    expectSuccess(await cli.docker(['tag', 'busybox:local', ref]));
    tagged.push(ref);
    return cli.docker(['push', ref]);
  }

  const tokenGet = (query: string, authorization?: string) =>
    fetch(`${token.realm}?service=${SERVICE}&${query}`, authorization ? { headers: { authorization } } : {});

  beforeAll(async () => {
    ldap = await startSlapd({ ldif: directoryLdif() });
    const { privateKeyPem, certificatePem } = generateSigningKey();
    token = await startTokenServer({
      issuer: ISSUER,
      service: SERVICE,
      keys: { privateKey: privateKeyPem, certificateChain: certificatePem },
      authenticate: ldapAuthenticator({
        url: ldap.url, bindDN: LDAP_SERVICE.dn, bindPassword: LDAP_SERVICE.password,
        baseDN: PEOPLE, userFilter: '(&(objectClass=inetOrgPerson)(uid=${account}))', groupAttribute: 'memberOf', timeoutMs: 2000,
      }),
      authorize: aclAuthorizer([
        { comment: 'team members push to their teams', match: { labels: { groups: 'team-*' }, type: 'repository', name: '${labels:groups}/*' }, actions: ['pull', 'push'] },
        ...ownNamespaceAcl(),
      ]),
      throttle: { maxFailures: 50 },
      onError: () => {},
    });
    registry = await startRegistry({ service: SERVICE, issuer: ISSUER, realm: token.realm, certPem: certificatePem });
  });

  afterAll(async () => {
    for (const cli of clis) {
      for (const ref of tagged) await cli.docker(['rmi', '--force', ref]);
      await cli.dispose();
    }
    await registry?.stop();
    await token?.stop();
    await ldap?.dispose();
  });

  describe('docker login, push and pull with a directory user', () => {
    test('docker login with the LDAP password succeeds; push and pull of the own namespace work', async () => {
      const cli = await loggedIn('alice');
      expectSuccess(await push(cli, 'alice/bb'));
      expectSuccess(await cli.docker(['rmi', `${registry.host}/alice/bb:1`]));
      expectSuccess(await cli.docker(['pull', `${registry.host}/alice/bb:1`]));
    });
    test('docker login with a wrong password fails with the token service\'s message', async () => {
      const cli = await dockerCli();
      clis.push(cli);
      const login = await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: 'wrong' });
      expect(login.code).not.toBe(0);
      expect(login.stderr).toContain('invalid username or password');
    });
  });

  describe('a group ACL decides a push to a team namespace', () => {
    test('a member of team-red pushes to team-red/…', async () => {
      const from = token.events.length;
      expectSuccess(await push(await loggedIn('alice'), 'team-red/app'));
      expect(token.events.slice(from)).toContainEqual(expect.objectContaining({
        type: 'token.issued', account: 'alice', granted: expect.stringMatching(/repository:team-red\/app:(push,pull|pull,push)/),
      }));
    });
    test('a non-member (bob, team-blue) is denied a push to team-red/…', async () => {
      const result = await push(await loggedIn('bob'), 'team-red/app2');
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('denied');
    });
    test('only the groups the rule admits open namespaces: alice (team-red, admins) cannot push to admins/…', async () => {
      const result = await push(await loggedIn('alice'), 'admins/app');
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('denied');
    });
  });

  describe('hostile and empty credentials and an unreachable directory', () => {
    test('a filter-injection user name (*)(uid=* and *) is refused like any unknown user', async () => {
      for (const name of ['*)(uid=*', '*']) {
        const res = await tokenGet('scope=repository:alice/bb:pull', basic(name, LDAP_USERS.alice.password));
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: 'invalid_client', error_description: 'invalid username or password' });
      }
    });
    test('an empty password is 401, even though the directory would take it as an anonymous bind', async () => {
      const res = await tokenGet('account=alice', basic('alice', ''));
      expect(res.status).toBe(401);
    });
    test('with slapd stopped the token endpoint answers 503 temporarily_unavailable with Retry-After, then recovers', async () => {
      await ldap.stop();
      try {
        const res = await tokenGet('account=alice', basic('alice', LDAP_USERS.alice.password));
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        const body = await res.json() as Record<string, unknown>;
        expect(body.error).toBe('temporarily_unavailable');
        expect(JSON.stringify(body)).not.toContain(LDAP_USERS.alice.password);
        const cli = await dockerCli();
        clis.push(cli);
        const login = await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: LDAP_USERS.alice.password });
        expect(login.code).not.toBe(0);
        expect(login.stderr).not.toContain('invalid username or password');
      } finally {
        await ldap.restart();
      }
      const res = await tokenGet('account=alice', basic('alice', LDAP_USERS.alice.password));
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ scope: '' });
    });
  });
});
