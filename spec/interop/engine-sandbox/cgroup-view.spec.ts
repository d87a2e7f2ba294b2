import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const cgroupsV1: PeerCheck = {
  name: 'cgroup v1 memory, cpu and pids controllers (root)',
  available: () => ['memory', 'cpu', 'pids'].every((c) => readFileSync('/proc/self/cgroup', 'utf8').split('\n').some((l) => l.split(':')[1]?.split(',').includes(c))) && process.getuid?.() === 0,
};
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));

function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    execFile(CLI, args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describeWithPeers('Docker CLI 28 against the sandbox runtime: a container sees its own cgroups and no host path', [program(CLI), bwrap, cgroupsV1], () => {
  const runtime = hasBwrap ? sandboxRuntime() : undefined;
  const listening = runtime ? listenOnSocket(runtime) : undefined;
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });
  const cli = async (...args: string[]) => docker((await listening)!.socket, args);

  test('--memory 64m: /sys/fs/cgroup/memory/memory.limit_in_bytes inside says 67108864', async () => {
    const r = await cli('run', '--rm', '--memory', '64m', 'busybox', 'cat', '/sys/fs/cgroup/memory/memory.limit_in_bytes');
    expect(r).toMatchObject({ code: 0, stdout: '67108864\n' });
  });
  test('--pids-limit 50 and --cpus 0.5: pids.max and cpu.cfs_quota_us/cfs_period_us inside are the limits', async () => {
    const r = await cli('run', '--rm', '--pids-limit', '50', '--cpus', '0.5', 'busybox', 'cat', '/sys/fs/cgroup/pids/pids.max', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us', '/sys/fs/cgroup/cpu/cpu.cfs_period_us');
    expect(r).toMatchObject({ code: 0, stdout: '50\n50000\n100000\n' });
  });
  test('/proc/self/cgroup shows / for every hierarchy (a cgroup namespace), with or without limits', async () => {
    for (const limits of [['--memory', '64m', '--pids-limit', '50'], []]) {
      const r = await cli('run', '--rm', ...limits, 'busybox', 'cat', '/proc/self/cgroup');
      expect(r.code).toBe(0);
      const paths = r.stdout.trim().split('\n').map((l) => l.split(':').slice(2).join(':'));
      expect(paths.length).toBeGreaterThan(0);
      expect(paths.every((p) => p === '/')).toBe(true);
    }
  });
  test('the view is read-only: the container cannot raise its own limit', async () => {
    const r = await cli('run', '--rm', '--memory', '64m', 'busybox', 'sh', '-c', 'echo 1073741824 > /sys/fs/cgroup/memory/memory.limit_in_bytes');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Read-only file system/);
  });
  test('docker exec sees the same: its limit at /sys/fs/cgroup and / in /proc/self/cgroup', async () => {
    const name = `dg-cgview-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, '--memory', '64m', 'busybox', 'sleep', '30')).code).toBe(0);
    const r = await cli('exec', name, 'sh', '-c', 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; grep -c -v ":/$" /proc/self/cgroup');
    expect(r.stdout).toBe('67108864\n0\n');
    await cli('rm', '-f', name);
  });
});
