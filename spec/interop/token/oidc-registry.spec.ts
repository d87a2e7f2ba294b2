/**
 * Keyless CI pushes: an ID token from a real OpenID Connect provider (oidc-provider 9, in this
 * process) used as the password of `docker login -u oidc`, through Docker CLI 28 and registry 2.8,
 * with the token's GitHub-style claims deciding where it may push.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { decodeJwt } from 'jose';
import { dockerd, dockerImage, describeWithPeers, program } from '../../support/peers.js';
import { aclAuthorizer, generateSigningKey } from '../../../lib/index.js';
import { oidcAuthenticator } from '../../../lib/token/authn/oidc/index.js';
import {
  dockerCli, startOidcIssuer, startRegistry, startTokenServer,
  type DockerCli, type ProgramResult, type RunningOidcIssuer, type RunningRegistry, type RunningTokenServer,
} from '../support/index.js';

const SERVICE = 'registry.oidc.test';
const ISSUER = 'dockgate-oidc-interop';
/** The `aud` CI jobs ask for; the provider's client id. */
const AUDIENCE = 'registry.oidc.test';
const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
const expectSuccess = (r: ProgramResult) => expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** What GitHub Actions puts in a job's token for a push to main of acme/app. */
const mainOfAcmeApp = {
  sub: 'repo:acme/app:ref:refs/heads/main', repository: 'acme/app', repository_owner: 'acme', ref: 'refs/heads/main',
};

describeWithPeers('OIDC ID tokens with docker login -u oidc, push through registry 2.8', [
  dockerd(), program('docker-registry', ['--version']), dockerImage('busybox:local'),
], () => {
  let idp: RunningOidcIssuer;
  let stranger: RunningOidcIssuer;
  let token: RunningTokenServer;
  let registry: RunningRegistry;
  const clis: DockerCli[] = [];
  const tagged: string[] = [];

  async function login(password: string): Promise<[DockerCli, ProgramResult]> {
    const cli = await dockerCli();
    clis.push(cli);
    return [cli, await cli.docker(['login', registry.host, '-u', 'oidc', '--password-stdin'], { input: password })];
  }

  async function push(cli: DockerCli, repository: string): Promise<ProgramResult> {
    const ref = `${registry.host}/${repository}:1`;
    expectSuccess(await cli.docker(['tag', 'busybox:local', ref]));
    tagged.push(ref);
    return cli.docker(['push', ref]);
  }

  const tokenGet = (password: string) =>
    fetch(`${token.realm}?service=${SERVICE}&account=oidc&offline_token=true&scope=repository:acme/app:pull`, { headers: { authorization: basic('oidc', password) } });

  beforeAll(async () => {
    idp = await startOidcIssuer({ clients: [AUDIENCE, 'some-other-app'] });
    stranger = await startOidcIssuer({ clients: [AUDIENCE] });
    const { privateKeyPem, certificatePem } = generateSigningKey();
    token = await startTokenServer({
      issuer: ISSUER,
      service: SERVICE,
      keys: { privateKey: privateKeyPem, certificateChain: certificatePem },
      authenticate: oidcAuthenticator({
        issuers: [{ issuer: idp.issuer, audience: AUDIENCE, account: 'repository_owner', labels: { repository: 'repository', ref: 'ref' } }],
        // No cooldown, so the rotation case does not wait 30 s for jose to fetch the keys again.
        jwksCooldownSeconds: 0,
        timeoutMs: 2000,
      }),
      authorize: aclAuthorizer([
        { comment: 'a job on main pushes its own repository', match: { labels: { ref: 'refs/heads/main' }, type: 'repository', name: '${labels:repository}' }, actions: ['pull', 'push'] },
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
    await idp?.stop();
    await stranger?.stop();
  });

  describe('an ID token logs in and pushes where its claims allow', () => {
    test('docker login -u oidc with the ID token succeeds; no refresh token, so the CLI keeps the ID token as its password', async () => {
      const idToken = await idp.idToken(AUDIENCE, mainOfAcmeApp);
      const from = token.events.length;
      const [cli, result] = await login(idToken);
      expectSuccess(result);
      expect(token.events.slice(from)).toContainEqual(expect.objectContaining({ type: 'token.issued', grant: 'basic', account: 'acme', refreshTokenIssued: false }));
      const entry = (await cli.readConfig()).auths?.[registry.host];
      expect(entry?.identitytoken).toBeUndefined();
      expect(entry?.auth).toBe(Buffer.from(`oidc:${idToken}`).toString('base64'));
      expectSuccess(await push(cli, 'acme/app'));
    });
    test('the same login is refused a push to another repository', async () => {
      const [cli, result] = await login(await idp.idToken(AUDIENCE, mainOfAcmeApp));
      expectSuccess(result);
      const pushed = await push(cli, 'acme/other');
      expect(pushed.code).not.toBe(0);
      expect(pushed.stderr).toContain('denied');
    });
    test('a token of the same repository from another branch is refused the push', async () => {
      const [cli, result] = await login(await idp.idToken(AUDIENCE, { ...mainOfAcmeApp, ref: 'refs/heads/feature' }));
      expectSuccess(result);
      const pushed = await push(cli, 'acme/app');
      expect(pushed.code).not.toBe(0);
      expect(pushed.stderr).toContain('denied');
    });
    test('the access token ends no later than the ID token', async () => {
      const idToken = await idp.idToken(AUDIENCE, mainOfAcmeApp, 90);
      const res = await tokenGet(idToken);
      expect(res.status).toBe(200);
      const body = await res.json() as { token: string; expires_in: number; refresh_token?: string };
      expect(body.refresh_token).toBeUndefined();
      expect(body.expires_in).toBeLessThanOrEqual(90);
      expect(decodeJwt(body.token).exp).toBeLessThanOrEqual(decodeJwt(idToken).exp as number);
    });
  });

  describe('tokens that must not log in', () => {
    test('an expired ID token', async () => {
      const [, result] = await login(await idp.idToken(AUDIENCE, mainOfAcmeApp, -120));
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('invalid username or password');
    });
    test('an ID token for another audience', async () => {
      const [, result] = await login(await idp.idToken('some-other-app', mainOfAcmeApp));
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('invalid username or password');
    });
    test('an ID token of an issuer that is not configured', async () => {
      const [, result] = await login(await stranger.idToken(AUDIENCE, mainOfAcmeApp));
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('invalid username or password');
    });
  });

  describe('the issuer rotates its key', () => {
    test('a token signed with the new key logs in (jose fetches the JWKS again for the unknown kid); one of the removed key no longer does', async () => {
      const old = await idp.idToken(AUDIENCE, mainOfAcmeApp);
      expect((await tokenGet(old)).status).toBe(200);
      await idp.rotateKey(false);
      const fresh = await idp.idToken(AUDIENCE, mainOfAcmeApp);
      const [cli, result] = await login(fresh);
      expectSuccess(result);
      expectSuccess(await push(cli, 'acme/app'));
      expect((await tokenGet(old)).status).toBe(401);
    });
    test('while the issuer is unreachable, a token needing a key fetch is 503 with Retry-After, never 401', async () => {
      await idp.rotateKey(true);
      const unseen = await idp.idToken(AUDIENCE, mainOfAcmeApp);
      idp.setDown(true);
      try {
        const res = await tokenGet(unseen);
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        const text = await res.text();
        expect(JSON.parse(text)).toMatchObject({ error: 'temporarily_unavailable' });
        expect(text).not.toContain(unseen);
      } finally {
        idp.setDown(false);
      }
      expect((await tokenGet(unseen)).status).toBe(200);
    });
  });
});
