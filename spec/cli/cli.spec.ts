import { describe, expect, test } from '@jest/globals';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, chownSync, closeSync, mkdtempSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import bcrypt from 'bcryptjs';
import { htpasswdAuthenticator, loadSigningKey } from '../../lib/index.js';
import { runCli } from '../../lib/cli/run-cli.js';

function io(stdin = '') {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), readStdin: async () => stdin } };
}

const tmp = () => mkdtempSync(join(tmpdir(), 'dockgate-cli-'));

describe('dockgate keygen writes a private key and a self-signed certificate for it', () => {
  test('the key loads as a signing key with the certificate as its chain', async () => {
    const dir = tmp();
    const c = io();
    expect(await runCli(['keygen', '--out', dir], c.io)).toBe(0);
    const key = readFileSync(join(dir, 'key.pem'));
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    expect(statSync(join(dir, 'key.pem')).mode & 0o777).toBe(0o600);
    const signing = loadSigningKey({ privateKey: key, certificateChain: cert });
    expect(signing.alg).toBe('ES256');
    const x509 = new X509Certificate(cert);
    expect(x509.verify(x509.publicKey)).toBe(true); // self-signed
    expect(x509.ca).toBe(true);
    expect(c.out.join('')).toContain(signing.kid);
  });
  test('RSA on request', async () => {
    const dir = tmp();
    expect(await runCli(['keygen', '--out', dir, '--type', 'rsa', '--bits', '2048'], io().io)).toBe(0);
    expect(createPrivateKey(readFileSync(join(dir, 'key.pem'))).asymmetricKeyType).toBe('rsa');
  });
  test('refuses to overwrite without --force', async () => {
    const dir = tmp();
    await runCli(['keygen', '--out', dir], io().io);
    const c = io();
    expect(await runCli(['keygen', '--out', dir], c.io)).toBe(2);
    expect(c.err.join('')).toContain('--force');
    expect(await runCli(['keygen', '--out', dir, '--force'], io().io)).toBe(0);
  });
  test('bad flags are usage errors (exit 2)', async () => {
    expect(await runCli(['keygen', '--type', 'dsa', '--out', tmp()], io().io)).toBe(2);
    expect(await runCli(['keygen', '--bogus'], io().io)).toBe(2);
    expect(await runCli(['keygen', '--out', tmp(), '--bits', '1024', '--type', 'rsa'], io().io)).toBe(2);
  });
});

describe('dockgate htpasswd adds bcrypt lines that verify', () => {
  test('add, then update, reading the password from stdin', async () => {
    const file = join(tmp(), 'users');
    expect(await runCli(['htpasswd', file, 'alice', '--cost', '4'], io('first\n').io)).toBe(0);
    expect(await runCli(['htpasswd', file, 'bob', '--cost', '4'], io('builder\n').io)).toBe(0);
    const c = io('second\n');
    expect(await runCli(['htpasswd', file, 'alice', '--cost', '4'], c.io)).toBe(0);
    expect(c.out.join('')).toContain('updated alice');
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    const alice = lines.find((l) => l.startsWith('alice:'))!.slice(6);
    expect(await bcrypt.compare('second', alice)).toBe(true);
    const authenticate = htpasswdAuthenticator({ file });
    expect(await authenticate({ username: 'bob', password: 'builder', service: 's' })).toEqual({ subject: 'bob' });
    expect(await authenticate({ username: 'alice', password: 'first', service: 's' })).toBeNull();
  });
  test('no password, or a user name with a colon, is a usage error', async () => {
    const file = join(tmp(), 'users');
    expect(await runCli(['htpasswd', file, 'alice'], io('').io)).toBe(2);
    expect(await runCli(['htpasswd', file, 'al:ice'], io('pw\n').io)).toBe(2);
    expect(await runCli(['htpasswd', file], io('pw\n').io)).toBe(2);
  });
});

describe('dockgate htpasswd replaces the file atomically (new file, fsync, rename), keeping mode and owner', () => {
  test('the file is a new inode with the complete table; the old inode keeps the old table whole', async () => {
    const file = join(tmp(), 'users');
    expect(await runCli(['htpasswd', file, 'alice', '--cost', '4'], io('first\n').io)).toBe(0);
    const before = statSync(file);
    const oldContent = readFileSync(file, 'utf8');
    // A reader that opened the file before the update (the token server mid-read) keeps reading the old table whole.
    const reader = openSync(file, 'r');
    expect(await runCli(['htpasswd', file, 'bob', '--cost', '4'], io('builder\n').io)).toBe(0);
    const after = statSync(file);
    expect(after.ino).not.toBe(before.ino);
    expect(readFileSync(reader, 'utf8')).toBe(oldContent);
    closeSync(reader);
    expect(readFileSync(file, 'utf8').trim().split('\n').map((l) => l.split(':')[0])).toEqual(['alice', 'bob']);
    expect(readdirSync(dirname(file))).toEqual(['users']);
  });
  test('a new file is 0600; an existing file keeps its mode and (as root) its owner', async () => {
    const file = join(tmp(), 'users');
    expect(await runCli(['htpasswd', file, 'alice', '--cost', '4'], io('first\n').io)).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    chmodSync(file, 0o640);
    const root = process.getuid?.() === 0;
    if (root) chownSync(file, 1234, 2345);
    expect(await runCli(['htpasswd', file, 'bob', '--cost', '4'], io('builder\n').io)).toBe(0);
    const after = statSync(file);
    expect(after.mode & 0o777).toBe(0o640);
    if (root) expect([after.uid, after.gid]).toEqual([1234, 2345]);
  });
});

describe('dockgate registry-config prints the auth.token block', () => {
  test('with the certificate path as rootcertbundle', async () => {
    const dir = tmp();
    await runCli(['keygen', '--out', dir], io().io);
    const c = io();
    const code = await runCli(['registry-config', '--cert', join(dir, 'cert.pem'), '--key', join(dir, 'key.pem'), '--issuer', 'dockgate', '--service', 'registry.local', '--realm', 'http://127.0.0.1:5001/token'], c.io);
    expect(code).toBe(0);
    expect(c.out.join('')).toBe([
      'auth:', '  token:', '    realm: "http://127.0.0.1:5001/token"', '    service: "registry.local"', '    issuer: "dockgate"',
      `    rootcertbundle: ${JSON.stringify(join(dir, 'cert.pem'))}`, '',
    ].join('\n'));
  });
  test('a certificate for another key, a missing flag or a bad realm is a usage error', async () => {
    const a = tmp();
    const b = tmp();
    await runCli(['keygen', '--out', a], io().io);
    await runCli(['keygen', '--out', b], io().io);
    const args = ['--issuer', 'i', '--service', 's', '--realm', 'http://x/token'];
    expect(await runCli(['registry-config', '--cert', join(a, 'cert.pem'), '--key', join(b, 'key.pem'), ...args], io().io)).toBe(2);
    expect(await runCli(['registry-config', '--cert', join(a, 'cert.pem')], io().io)).toBe(2);
    expect(await runCli(['registry-config', '--cert', join(a, 'cert.pem'), '--issuer', 'i', '--service', 's', '--realm', 'not a url'], io().io)).toBe(2);
    writeFileSync(join(a, 'junk.pem'), 'junk');
    expect(await runCli(['registry-config', '--cert', join(a, 'junk.pem'), ...args], io().io)).toBe(2);
  });
});

describe('the command line explains itself', () => {
  test('no command prints usage with exit 2; --help exits 0; unknown command exits 2', async () => {
    const none = io();
    expect(await runCli([], none.io)).toBe(2);
    expect(none.out.join('')).toContain('keygen');
    expect(await runCli(['--help'], io().io)).toBe(0);
    const h = io();
    expect(await runCli(['htpasswd', '--help'], h.io)).toBe(0);
    expect(h.out.join('')).toContain('standard input');
    expect(await runCli(['frobnicate'], io().io)).toBe(2);
  });
});

describe('dockgate rootless-cgroups prints the one command that delegates the server\'s cgroup v1 groups to a user', () => {
  test('each mounted controller\'s dockgate group under this process\'s own, made and chowned to --user', async () => {
    const { Cgroups } = await import('../../lib/engine/linux/cgroups.js');
    const dirs = [...Cgroups.groups().values()];
    const c = io();
    const code = await runCli(['rootless-cgroups', '--user', 'app'], c.io);
    if (dirs.length === 0) {
      expect(code).toBe(1);
      expect(c.err.join('')).toContain('nothing to delegate');
      return;
    }
    expect(code).toBe(0);
    expect(c.out.join('')).toBe(`sudo sh -c 'mkdir -p ${dirs.join(' ')} && chown -R app ${dirs.join(' ')}'\n`);
    expect(dirs.every((d) => d.startsWith('/sys/fs/cgroup/') && d.endsWith('/dockgate'))).toBe(true);
  });
  test('a --user that is not a user name is a usage error (exit 2), never pasted into the command', async () => {
    const c = io();
    expect(await runCli(['rootless-cgroups', '--user', "x'; rm -rf /"], c.io)).toBe(2);
    expect(c.out.join('')).toBe('');
  });
});
