import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { syscallProbe, SYSCALL } from '../../support/syscall-probe.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const x86_64: PeerCheck = { name: 'an x86_64 host (the filter\'s and the probes\' system call numbers)', available: () => process.arch === 'x64' };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));

function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    execFile(CLI, args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Static programs that make one system call and exit with its errno (0: it succeeded), bound read-only at /probe. */
const probes = mkdtempSync(join(tmpdir(), 'dockgate-probes-'));
chmodSync(probes, 0o755);
const PROBES: Record<string, Buffer> = {
  keyctl: syscallProbe(SYSCALL.keyctl, [0, -3]), // KEYCTL_GET_KEYRING_ID of the session keyring: succeeds unconfined
  add_key: syscallProbe(SYSCALL.add_key), // NULL arguments: EFAULT unconfined
  request_key: syscallProbe(SYSCALL.request_key), // NULL arguments: EFAULT unconfined
  bpf: syscallProbe(SYSCALL.bpf),
  perf_event_open: syscallProbe(SYSCALL.perf_event_open), // NULL attr: EFAULT unconfined
  no_randomize: syscallProbe(SYSCALL.personality, [0x0040000]), // ADDR_NO_RANDOMIZE: succeeds unconfined
  getpid: syscallProbe(SYSCALL.getpid),
};
for (const [name, elf] of Object.entries(PROBES)) writeFileSync(join(probes, name), elf, { mode: 0o755 });
const EPERM = 1;

describeWithPeers('Docker CLI 28 against the sandbox runtime: a seccomp filter like Docker\'s default profile', [program(CLI), bwrap, x86_64], () => {
  const runtime = hasBwrap ? sandboxRuntime() : undefined;
  const listening = runtime ? listenOnSocket(runtime) : undefined;
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });
  const cli = async (...args: string[]) => docker((await listening)!.socket, args);
  const run = (...args: string[]) => cli('run', '--rm', '-v', `${probes}:/probe:ro`, ...args);

  test('the container runs under a seccomp filter: /proc/self/status says Seccomp: 2', async () => {
    const r = await run('busybox', 'grep', '^Seccomp:', '/proc/self/status');
    expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Seccomp:\s+2\n$/) });
  });
  test('unshare -U -r (a fresh user namespace with every capability) and unshare -m fail with EPERM', async () => {
    const r = await run('busybox', 'sh', '-c', 'unshare -U -r true; echo "user=$?"; unshare -m true; echo "mount=$?"');
    expect(r.stdout).toBe('user=1\nmount=1\n');
    expect(r.stderr).toContain('Operation not permitted');
  });
  test('keyctl, add_key, request_key, bpf and perf_event_open answer EPERM', async () => {
    const r = await run('busybox', 'sh', '-c', 'for p in keyctl add_key request_key bpf perf_event_open getpid; do /probe/$p; echo "$p=$?"; done');
    expect(r.stdout).toBe(`keyctl=${EPERM}\nadd_key=${EPERM}\nrequest_key=${EPERM}\nbpf=${EPERM}\nperf_event_open=${EPERM}\ngetpid=0\n`);
  });
  test('personality(ADDR_NO_RANDOMIZE) answers EPERM (only Docker\'s personality values pass)', async () => {
    expect((await run('busybox', '/probe/no_randomize')).code).toBe(EPERM);
  });
  test('docker exec gets the same filter', async () => {
    const name = `dg-seccomp-exec-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, '-v', `${probes}:/probe:ro`, 'busybox', 'sleep', '30')).code).toBe(0);
    const r = await cli('exec', name, 'sh', '-c', 'grep ^Seccomp: /proc/self/status; /probe/keyctl; echo "keyctl=$?"; unshare -U -r true 2>/dev/null; echo "unshare=$?"');
    expect(r.stdout).toMatch(/^Seccomp:\s+2\nkeyctl=1\nunshare=1\n$/);
    await cli('rm', '-f', name);
  });
  test('--security-opt seccomp=unconfined lifts the filter (Seccomp: 0, keyctl works)', async () => {
    const r = await run('--security-opt', 'seccomp=unconfined', 'busybox', 'sh', '-c', 'grep ^Seccomp: /proc/self/status; /probe/keyctl; echo "keyctl=$?"');
    expect(r.stdout).toMatch(/^Seccomp:\s+0\nkeyctl=0\n$/);
  });
  test('--security-opt seccomp=PROFILE.json (a custom profile) is refused, naming SecurityOpt', async () => {
    const profile = join(probes, 'profile.json');
    writeFileSync(profile, JSON.stringify({ defaultAction: 'SCMP_ACT_ALLOW' }));
    const r = await cli('run', '--rm', '--security-opt', `seccomp=${profile}`, 'busybox', 'true');
    expect(r.code).toBe(125);
    expect(r.stderr).toContain('HostConfig.SecurityOpt "seccomp=<profile>": a custom seccomp profile is not supported');
  });
});
