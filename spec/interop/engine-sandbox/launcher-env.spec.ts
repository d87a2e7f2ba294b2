import { test, expect, afterAll } from '@jest/globals';
import { describe } from '@jest/globals';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { describeWithPeers } from '../../support/peers.js';
import { discardEnvArgs, writeEnvArgs } from '../../../lib/engine/runtime/sandbox/env-args.js';
import { CGROUPS_V1, SANDBOX_PEERS, sandboxCli } from '../support/sandbox-cli.js';

/**
 * Issue 24: the host-side launchers (the shell that joins cgroups, nsenter, bwrap) run as host
 * root. A container's Env must reach only the container's process, never them: before the fix,
 * `-e 'BASH_ENV=$(id >/tmp/x)'` ran `id` as host root.
 */
const marker = (name: string): string => `/tmp/dockgate-escape-${process.pid}-${name}`;
const hostile = (name: string): string[] => [
  '-e', `BASH_ENV=$(touch ${marker(`${name}-bash-env`)})`,
  '-e', `ENV=$(touch ${marker(`${name}-env`)})`,
  '-e', 'LD_PRELOAD=/dockgate-no-such-library.so',
  '-e', 'LD_LIBRARY_PATH=/dockgate-no-such-dir',
  '-e', 'PATH=/dockgate-no-such-bin',
  '-e', 'IFS=/',
  '-e', 'spring.profiles.active=dev',
];
/** The container's own view of its environment (absolute: its PATH is hostile too). */
const SHOW_ENV = ['/usr/bin/env'];
const EXPECTED = ['BASH_ENV=$(touch', 'ENV=$(touch', 'LD_PRELOAD=/dockgate-no-such-library.so', 'LD_LIBRARY_PATH=/dockgate-no-such-dir', 'PATH=/dockgate-no-such-bin', 'IFS=/', 'spring.profiles.active=dev'];

function expectContained(r: { code: number; stdout: string; stderr: string }, name: string): void {
  expect(existsSync(marker(`${name}-bash-env`))).toBe(false);
  expect(existsSync(marker(`${name}-env`))).toBe(false);
  // The host's dynamic loader complains about a missing LD_PRELOAD object when it sees one.
  expect(r.stderr).not.toContain('LD_PRELOAD');
  expect(r).toMatchObject({ code: 0, stderr: '' });
  for (const line of EXPECTED) expect(r.stdout).toContain(line);
}

describeWithPeers('sandbox runtime: a container\'s Env reaches only the container, never a host launcher', [...SANDBOX_PEERS, CGROUPS_V1], () => {
  const sandbox = sandboxCli();
  afterAll(async () => {
    await sandbox.close();
    for (const name of ['run', 'run-tty', 'exec', 'exec-user', 'exec-ctr']) for (const kind of ['bash-env', 'env']) rmSync(marker(`${name}-${kind}`), { force: true });
  });

  test('docker run with hostile BASH_ENV, ENV, LD_PRELOAD, LD_LIBRARY_PATH, PATH and IFS (and a pids limit, so the cgroup launcher runs): nothing runs on the host, the container sees every value', async () => {
    const r = await sandbox.cli('run', '--rm', '--pids-limit', '50', ...hostile('run'), 'busybox', ...SHOW_ENV);
    expectContained(r, 'run');
  });
  test('the same on a terminal (docker run -t)', async () => {
    const r = await sandbox.cli('run', '--rm', '-t', '--pids-limit', '50', ...hostile('run-tty'), 'busybox', ...SHOW_ENV);
    expectContained(r, 'run-tty');
  });
  test('docker exec with the hostile values, as root and as -u 1000: nothing runs on the host, the command sees every value', async () => {
    const name = `dg-env-${Date.now()}`;
    expect((await sandbox.cli('run', '-d', '--name', name, '--pids-limit', '50', ...hostile('exec-ctr'), 'busybox', '/bin/sleep', '60')).code).toBe(0);
    expectContained(await sandbox.cli('exec', ...hostile('exec'), name, ...SHOW_ENV), 'exec');
    expectContained(await sandbox.cli('exec', '-u', '1000', ...hostile('exec-user'), name, ...SHOW_ENV), 'exec-user');
    expect((await sandbox.cli('exec', '-u', '1000', ...hostile('exec-user'), name, '/usr/bin/id', '-u')).stdout).toBe('1000\n');
    expect(existsSync(marker('exec-ctr-bash-env'))).toBe(false);
    await sandbox.cli('rm', '-f', name);
  });
  test('an exec in a container with a non-root User (its own user namespace) gets its Env the same way', async () => {
    const name = `dg-env-user-${Date.now()}`;
    expect((await sandbox.cli('run', '-d', '--name', name, '-u', '1000', 'busybox', 'sleep', '60')).code).toBe(0);
    expectContained(await sandbox.cli('exec', ...hostile('exec-user'), name, ...SHOW_ENV), 'exec-user');
    expect((await sandbox.cli('exec', ...hostile('exec-user'), name, '/usr/bin/id', '-u')).stdout).toBe('1000\n');
    await sandbox.cli('rm', '-f', name);
  });
});

describe('the environment file bwrap reads (--args) cannot be split into options', () => {
  test('an entry holding a NUL byte is refused, naming it (the engine refuses it at create too; this holds for any caller)', async () => {
    await expect(writeEnvArgs(['A=x\u0000--bind\u0000/\u0000/host'])).rejects.toThrow('Env entry "A" contains a NUL byte');
  });
  test('the file is readable by its owner only and holds --clearenv, then --setenv NAME VALUE per entry', async () => {
    const file = await writeEnvArgs(['A=1', 'spring.profiles.active=dev', 'EMPTY']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').split('\0')).toEqual(['--clearenv', '--setenv', 'A', '1', '--setenv', 'spring.profiles.active', 'dev', '--setenv', 'EMPTY', '', '']);
    discardEnvArgs(file);
  });
});
