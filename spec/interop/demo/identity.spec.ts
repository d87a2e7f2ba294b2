/**
 * The demo's identity flags as a newcomer uses them: --users with another file, --ldap against a
 * real slapd and --oidc-issuer against a real OpenID Connect provider, and a banner that names
 * the accounts the demo really serves.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program } from '../../support/peers.js';
import { htpasswdLine } from '../../../lib/index.js';
import { LDAP_SERVICE, startOidcIssuer, startSlapd, type RunningOidcIssuer, type RunningSlapd } from '../support/index.js';
import { directoryLdif, LDAP_USERS, PEOPLE } from '../fixtures/ldap-directory.js';

const MAIN = join(process.cwd(), 'demo/dist/main.js');

function startDemo(args: string[]): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      if (out.includes('Ctrl-C stops the demo.')) {
        clearTimeout(timer);
        resolve({ child, output: () => out });
      }
    });
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`demo exited:\n${out}`)); });
  });
}

describeWithPeers('the demo with --users, --ldap and --oidc-issuer', [
  { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(MAIN) },
  program('slapd', ['-VV']), program('ldapadd', ['-VV']),
], () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-demo-identity-'));
  let ldap: RunningSlapd;
  let idp: RunningOidcIssuer;
  let demo: { child: ChildProcess; output: () => string };
  let base: string;
  const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

  beforeAll(async () => {
    ldap = await startSlapd({ ldif: directoryLdif() });
    idp = await startOidcIssuer({ clients: ['registry.local'] });
    writeFileSync(join(dir, 'users'), `${await htpasswdLine('carol', 'carol file pw', 4)}\n${await htpasswdLine('dave', 'dave pw', 4)}\n`);
    writeFileSync(join(dir, 'bind-password'), `${LDAP_SERVICE.password}\n`);
    writeFileSync(join(dir, 'claims.json'), JSON.stringify({ account: 'repository_owner', labels: { repository: 'repository' } }));
    writeFileSync(join(dir, 'acl.json'), JSON.stringify([
      { match: { labels: { groups: 'team-*' }, type: 'repository', name: '${labels:groups}/*' }, actions: ['pull', 'push'] },
      { match: { labels: { repository: '/.+/' }, type: 'repository', name: '${labels:repository}' }, actions: ['pull', 'push'] },
    ]));
    demo = await startDemo([
      '--port', '0', '--engine-socket', join(dir, 'engine.sock'), '--state-dir', join(dir, 'state'), '--runtime', 'process',
      '--users', join(dir, 'users'), '--acl', join(dir, 'acl.json'),
      '--ldap', ldap.url, '--ldap-base-dn', PEOPLE, '--ldap-bind-dn', LDAP_SERVICE.dn, '--ldap-bind-password-file', join(dir, 'bind-password'),
      '--oidc-issuer', idp.issuer, '--oidc-claims', join(dir, 'claims.json'),
    ]);
    base = /token endpoint\s+(http:\/\/\S+)\/token/.exec(demo.output())![1]!;
  });
  afterAll(async () => {
    demo?.child.kill('SIGKILL');
    await ldap?.dispose();
    await idp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the banner names the accounts of --users (no demo passwords it does not hold), the directory and the issuer', () => {
    const out = demo.output();
    expect(out).toContain(`Accounts in ${join(dir, 'users')}:`);
    expect(out).toMatch(/carol \/ \(password as set in the file\)/);
    expect(out).not.toContain('wonderland');
    expect(out).not.toMatch(/\balice\b/);
    expect(out).toContain(`LDAP users of ${ldap.url} under ${PEOPLE}`);
    expect(out).toContain(`ID token of ${idp.issuer} for audience registry.local`);
    expect(out).toContain('curl -s -u carol:PASSWORD');
    expect(out).not.toContain(LDAP_SERVICE.password);
  });

  test('the first backend that knows the user decides: an htpasswd user, an LDAP user with a team group and a CI job\'s ID token each get their grants', async () => {
    const get = (headers: Record<string, string>, scope: string) => fetch(`${base}/token?service=registry.local&scope=${scope}`, { headers });
    expect((await get(basic('dave', 'dave pw'), 'repository:x/y:pull')).status).toBe(200);
    // carol is in the directory too: LDAP comes first in the chain, so its password decides.
    expect((await get(basic('carol', 'carol file pw'), 'repository:x/y:pull')).status).toBe(401);
    expect((await get(basic('carol', LDAP_USERS.carol.password), 'repository:x/y:pull')).status).toBe(200);
    const team = await (await get(basic('alice', LDAP_USERS.alice.password), 'repository:team-red/app:push')).json() as { scope: string };
    expect(team.scope).toBe('repository:team-red/app:push');
    const ci = await (await get(basic('oidc', await idp.idToken('registry.local', { sub: 'x', repository: 'acme/app', repository_owner: 'acme' })), 'repository:acme/app:push')).json() as { scope: string };
    expect(ci.scope).toBe('repository:acme/app:push');
    expect((await get(basic('alice', 'wrong'), 'repository:team-red/app:push')).status).toBe(401);
  });
});
