/**
 * The command line's output works with the real registry: a key from `dockgate keygen` signs
 * tokens that registry 2.8 accepts with its certificate as rootcertbundle (configured from
 * `dockgate registry-config`), for users added with `dockgate htpasswd`.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { htpasswdAuthenticator, ownNamespaceAcl, aclAuthorizer } from '../../../lib/index.js';
import { runCli } from '../../../lib/cli/run-cli.js';
import { dockerd, describeWithPeers, program } from '../../support/peers.js';
import { dockerCli, runProgram, startRegistry, startTokenServer, type DockerCli, type RunningRegistry, type RunningTokenServer } from '../support/index.js';

const io = (stdin = '') => {
  const out: string[] = [];
  return { out, io: { stdout: (t: string) => out.push(t), stderr: (t: string) => out.push(t), readStdin: async () => stdin } };
};

describeWithPeers('keys, users and registry config from the dockgate command line work with registry 2.8', [
  dockerd(), program('docker-registry', ['--version']), program('skopeo'),
], () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-cli-interop-'));
  let token: RunningTokenServer;
  let registry: RunningRegistry;
  let cli: DockerCli;

  beforeAll(async () => {
    for (const type of ['ec', 'rsa']) {
      expect(await runCli(['keygen', '--out', join(dir, type), '--type', type, '--bits', '2048'], io().io)).toBe(0);
    }
    expect(await runCli(['htpasswd', join(dir, 'users'), 'carol', '--cost', '4'], io('c4rol-pw\n').io)).toBe(0);
    cli = await dockerCli();
  });
  afterAll(async () => {
    await registry?.stop();
    await token?.stop();
    await cli?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test.each(['ec', 'rsa'])('a %s key from keygen, with registry-config\'s block: docker login and skopeo succeed', async (type) => {
    await registry?.stop();
    await token?.stop();
    token = await startTokenServer({
      issuer: 'cli-issuer', service: 'cli.registry',
      keys: { privateKey: readFileSync(join(dir, type, 'key.pem')), certificateChain: readFileSync(join(dir, type, 'cert.pem')) },
      authenticate: htpasswdAuthenticator({ file: join(dir, 'users') }),
      authorize: aclAuthorizer(ownNamespaceAcl()),
    });
    const printed = io();
    expect(await runCli(['registry-config', '--cert', join(dir, type, 'cert.pem'), '--key', join(dir, type, 'key.pem'),
      '--issuer', 'cli-issuer', '--service', 'cli.registry', '--realm', token.realm], printed.io)).toBe(0);
    const block = printed.out.join('');
    const value = (key: string) => JSON.parse(new RegExp(`^\\s+${key}: (".*")$`, 'm').exec(block)![1] as string) as string;
    registry = await startRegistry({
      realm: value('realm'), service: value('service'), issuer: value('issuer'), certPem: readFileSync(value('rootcertbundle'), 'utf8'),
    });
    const login = await cli.docker(['login', registry.host, '-u', 'carol', '--password-stdin'], { input: 'c4rol-pw' });
    expect(login.stdout + login.stderr).toContain('Login Succeeded');
    const tags = await runProgram('skopeo', ['list-tags', '--tls-verify=false', '--creds', 'carol:c4rol-pw', `docker://${registry.host}/carol/none`]);
    // The repository does not exist: the registry answers NAME_UNKNOWN only after it accepted the token.
    expect(tags.stderr).toMatch(/404 \(Not Found\)|name unknown/i);
    expect(tags.stderr).not.toMatch(/unauthorized|authentication required/i);
  });
});
