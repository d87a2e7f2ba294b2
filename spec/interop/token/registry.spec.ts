/**
 * The token service against the programs users run: registry 2.8 verifying dockgate's tokens,
 * and the Docker CLI 28 (through dockerd), containerd's ctr and skopeo fetching them — each
 * through the grant it really uses (shared PEERS.md, reference token-auth.md §3).
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { dockerd, dockerImage, describeWithPeers, program } from '../../support/peers.js';
import { aclAuthorizer, generateSigningKey, htpasswdAuthenticator, htpasswdLine, ownNamespaceAcl, type AuditEvent } from '../../../lib/index.js';
import {
  dockerCli, runProgram, startRegistry, startTokenServer,
  type DockerCli, type ProgramResult, type RunningRegistry, type RunningTokenServer,
} from '../support/index.js';

const SERVICE = 'registry.dockgate.test';
const ISSUER = 'dockgate-interop';
const PASSWORD = 'correct horse battery staple';
const WRONG = 'not the password';
const CONTAINERD = ['-a', '/var/run/docker/containerd/containerd.sock', '-n', 'dockgate-interop'];

/** Output of a peer program, shown when an expectation on it fails. */
const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

function expectSuccess(r: ProgramResult): void {
  expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
}

describeWithPeers('token service with real registry clients', [
  dockerd(), program('docker-registry', ['--version']), program('skopeo'), program('ctr', ['--version']), dockerImage('busybox:local'),
], () => {
  let token: RunningTokenServer;
  let registry: RunningRegistry;
  let cli: DockerCli;
  let image: string;
  const tagged: string[] = [];

  /** Audit events recorded while `action` ran. */
  async function eventsDuring<T>(action: () => Promise<T>): Promise<[T, AuditEvent[]]> {
    const from = token.events.length;
    const result = await action();
    return [result, token.events.slice(from)];
  }

  beforeAll(async () => {
    const { privateKeyPem, certificatePem } = generateSigningKey();
    const users = [await htpasswdLine('alice', PASSWORD, 4), await htpasswdLine('bob', 'bob password', 4)].join('\n');
    token = await startTokenServer({
      issuer: ISSUER,
      service: SERVICE,
      keys: { privateKey: privateKeyPem, certificateChain: certificatePem },
      authenticate: htpasswdAuthenticator({ content: users }),
      authorize: aclAuthorizer(ownNamespaceAcl()),
      // The throttle has its own unit specs; here several clients fail on purpose from one address.
      throttle: { maxFailures: 50 },
    });
    registry = await startRegistry({ service: SERVICE, issuer: ISSUER, realm: token.realm, certPem: certificatePem });
    cli = await dockerCli();
    image = `${registry.host}/alice/bb:1`;
  });

  afterAll(async () => {
    if (cli) {
      for (const ref of tagged) await cli.docker(['rmi', '--force', ref]);
      await cli.docker(['logout', registry.host]);
      await cli.dispose();
    }
    if (registry) await runProgram('ctr', [...CONTAINERD, 'images', 'rm', `${registry.host}/alice/bb:1`]);
    await runProgram('ctr', [...CONTAINERD.slice(0, 2), 'namespaces', 'rm', 'dockgate-interop']);
    await registry?.stop();
    await token?.stop();
  });

  test('docker login fetches a refresh token with GET + Basic (offline_token) and stores it as identitytoken, never the password', async () => {
    const [result, events] = await eventsDuring(() =>
      cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: PASSWORD }));
    expectSuccess(result);
    expect(result.stdout).toContain('Login Succeeded');
    expect(events).toContainEqual(expect.objectContaining({
      type: 'token.issued', grant: 'basic', account: 'alice', clientId: 'docker', service: SERVICE, refreshTokenIssued: true,
    }));
    const entry = (await cli.readConfig()).auths?.[registry.host];
    expect(entry?.identitytoken).toMatch(/^dgr_[A-Za-z0-9_-]{43}$/);
    expect(await cli.readConfigText()).not.toContain(Buffer.from(`alice:${PASSWORD}`).toString('base64'));
  });

  test('docker push redeems the identity token: refresh_token grant, client_id docker, pull+push granted', async () => {
    expectSuccess(await cli.docker(['tag', 'busybox:local', image]));
    tagged.push(image);
    const [result, events] = await eventsDuring(() => cli.docker(['push', image]));
    expectSuccess(result);
    const issued = events.filter((e) => e.type === 'token.issued');
    expect(issued.length).toBeGreaterThan(0);
    expect(issued.every((e) => e.grant === 'refresh_token' && e.clientId === 'docker' && e.account === 'alice')).toBe(true);
    expect(issued.map((e) => e.granted)).toContainEqual(expect.stringMatching(/^repository:alice\/bb:(pull,push|push,pull)$/));
  });

  test('docker pull, after the image is removed, redeems the identity token for pull', async () => {
    expectSuccess(await cli.docker(['rmi', image]));
    const [result, events] = await eventsDuring(() => cli.docker(['pull', image]));
    expectSuccess(result);
    expect(events.filter((e) => e.type === 'token.issued')).toEqual([
      expect.objectContaining({ grant: 'refresh_token', clientId: 'docker', account: 'alice', granted: 'repository:alice/bb:pull' }),
    ]);
  });

  test('ctr images pull --user uses the password grant (client_id containerd-client), then the image is removed', async () => {
    const [result, events] = await eventsDuring(() =>
      runProgram('ctr', [...CONTAINERD, 'images', 'pull', '--plain-http', '--user', `alice:${PASSWORD}`, image], { timeoutMs: 60_000 }));
    expectSuccess(result);
    const issued = events.filter((e) => e.type === 'token.issued');
    expect(issued.length).toBeGreaterThan(0);
    expect(issued.every((e) => e.grant === 'password' && e.clientId === 'containerd-client' && e.account === 'alice')).toBe(true);
    expect(issued.map((e) => e.granted)).toContain('repository:alice/bb:pull');
    expectSuccess(await runProgram('ctr', [...CONTAINERD, 'images', 'rm', image]));
  });

  test('skopeo inspect and list-tags --creds use GET + Basic with account and scope', async () => {
    const [inspect, events] = await eventsDuring(() =>
      runProgram('skopeo', ['inspect', '--tls-verify=false', '--creds', `alice:${PASSWORD}`, `docker://${image}`]));
    expectSuccess(inspect);
    expect(JSON.parse(inspect.stdout)).toMatchObject({ Name: `${registry.host}/alice/bb`, Digest: expect.stringMatching(/^sha256:/) });
    expect(events).toContainEqual(expect.objectContaining({
      type: 'token.issued', grant: 'basic', account: 'alice', granted: 'repository:alice/bb:pull', refreshTokenIssued: false,
    }));
    const tags = await runProgram('skopeo', ['list-tags', '--tls-verify=false', '--creds', `alice:${PASSWORD}`, `docker://${registry.host}/alice/bb`]);
    expectSuccess(tags);
    expect(JSON.parse(tags.stdout)).toMatchObject({ Tags: ['1'] });
  });

  test('a wrong password is refused: docker login and skopeo print "invalid username or password", ctr fails with 401', async () => {
    const other = await dockerCli();
    try {
      const [login, events] = await eventsDuring(() =>
        other.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: WRONG }));
      expect(login.code).not.toBe(0);
      expect(login.stderr).toContain('invalid username or password');
      expect(events).toContainEqual(expect.objectContaining({ type: 'login.failed', account: 'alice', clientId: 'docker' }));
      expect((await other.readConfig()).auths?.[registry.host]).toBeUndefined();
    } finally {
      await other.dispose();
    }
    const skopeo = await runProgram('skopeo', ['inspect', '--tls-verify=false', '--creds', `alice:${WRONG}`, `docker://${image}`]);
    expect(skopeo.code).not.toBe(0);
    expect(skopeo.stderr).toContain('invalid username/password: unauthorized: invalid username or password');
    const [ctr, ctrEvents] = await eventsDuring(() =>
      runProgram('ctr', [...CONTAINERD, 'images', 'pull', '--plain-http', '--user', `alice:${WRONG}`, image]));
    expect(ctr.code).not.toBe(0);
    // containerd 1.6 prints only the status; the 400 invalid_grant of its POST makes it retry with GET + Basic.
    expect(ctr.stderr).toContain('failed to fetch oauth token: unexpected status: 401 Unauthorized');
    expect(ctrEvents).toEqual([
      expect.objectContaining({ type: 'login.failed', grant: 'password', account: 'alice', clientId: 'containerd-client' }),
      expect.objectContaining({ type: 'login.failed', grant: 'basic', account: 'alice', clientId: '' }),
    ]);
  });

  test("alice cannot push into bob's namespace: the token endpoint grants nothing for it and the registry refuses", async () => {
    const foreign = `${registry.host}/bob/bb:1`;
    expectSuccess(await cli.docker(['tag', 'busybox:local', foreign]));
    tagged.push(foreign);
    const [push, events] = await eventsDuring(() => cli.docker(['push', foreign]));
    expect(push.code).not.toBe(0);
    expect(push.stderr).toContain('denied: requested access to the resource is denied');
    // dockerd asks for bob/bb (push,pull), then again with alice/bb:pull to try a cross-repository mount.
    const asked = events.filter((e) => e.requested?.includes('repository:bob/bb:push,pull'));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((e) => e.type === 'token.issued' && e.grant === 'refresh_token')).toBe(true);
    expect(events.map((e) => e.granted ?? '').join(' ')).not.toContain('bob/');
  });
});
