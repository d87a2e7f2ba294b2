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
/** The limits need cgroup v1 memory, cpu and pids hierarchies this process may create groups in (root, as in CI). */
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

/** A shell that holds `bytes` of memory in a variable, then says so. */
const HOLD = (bytes: number): string[] => ['sh', '-c', `x=$(head -c ${bytes} /dev/zero | tr "\\0" a); echo held \${#x}`];

describeWithPeers('Docker CLI 28 against the sandbox runtime: memory, CPU and pids limits are honored with cgroups', [program(CLI), bwrap, cgroupsV1], () => {
  const runtime = hasBwrap ? sandboxRuntime() : undefined;
  const listening = runtime ? listenOnSocket(runtime) : undefined;
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });
  const cli = async (...args: string[]) => docker((await listening)!.socket, args);

  test('--memory 16m: a process that outgrows it is OOM-killed (exit 137, State.OOMKilled true)', async () => {
    const name = `dg-oom-${Date.now()}`;
    const r = await cli('run', '--name', name, '--memory', '16m', 'busybox', ...HOLD(64_000_000));
    expect(r.code).toBe(137);
    expect(r.stdout).not.toContain('held');
    expect((await cli('inspect', '-f', '{{.State.OOMKilled}} {{.State.ExitCode}} {{.HostConfig.Memory}}', name)).stdout).toBe('true 137 16777216\n');
    await cli('rm', name);
  });
  test('--memory 64m: the same process within the limit runs to the end', async () => {
    const r = await cli('run', '--rm', '--memory', '64m', 'busybox', ...HOLD(4_000_000));
    expect(r).toMatchObject({ code: 0, stdout: 'held 4000000\n' });
  });
  test('docker stats measures a limited container against its limit, from its memory group', async () => {
    const name = `dg-stats-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, '--memory', '32m', 'busybox', 'sleep', '30')).code).toBe(0);
    const r = await cli('stats', '--no-stream', '--format', '{{.MemUsage}}', name);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ \/ 32MiB\n$/);
    await cli('rm', '-f', name);
  });
  test('--pids-limit 4: a fifth process cannot be forked', async () => {
    const r = await cli('run', '--rm', '--pids-limit', '4', 'busybox', 'sh', '-c', 'for i in 1 2 3 4 5 6; do sleep 1 & done; wait');
    expect(r.stderr).toContain("can't fork");
  });
  test('--cpus 0.5: the container runs in a CPU group with a 50 ms quota per 100 ms period', async () => {
    // Its own cgroup namespace: the group is its root, as with dockerd's private cgroupns.
    const r = await cli('run', '--rm', '--cpus', '0.5', 'busybox', 'sh', '-c', 'grep -E "^[0-9]+:cpu:" /proc/self/cgroup; cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+:cpu:\/\n50000\n$/);
    // The group is gone with the container; while it ran it held the quota (checked in the next test).
  });
  test('--cpus 0.25 and --cpu-shares 512 are written to the container\'s CPU group while it runs', async () => {
    const name = `dg-cpu-${Date.now()}`;
    const started = await cli('run', '-d', '--name', name, '--cpus', '0.25', '--cpu-shares', '512', 'busybox', 'sleep', '30');
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const groups = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => / - cgroup \S+ \S*\bcpu\b/.test(l))!.split(' ')[4]!;
    const dir = join(groups, 'dockgate', id);
    expect(readFileSync(join(dir, 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('25000');
    expect(readFileSync(join(dir, 'cpu.cfs_period_us'), 'utf8').trim()).toBe('100000');
    expect(readFileSync(join(dir, 'cpu.shares'), 'utf8').trim()).toBe('512');
    await cli('rm', '-f', name);
    expect(existsSync(dir)).toBe(false);
  });
  test('docker update sets limits on a running container (its group made, its processes moved in) and keeps them in inspect', async () => {
    const name = `dg-update-${Date.now()}`;
    const started = await cli('run', '-d', '--name', name, 'busybox', 'sleep', '30');
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    // (--pids-limit and --cpus need API 1.40 and 1.29 on update; the spec's engine serves up to 1.28.)
    expect(await cli('update', '--memory', '32m', '--cpu-shares', '512', name)).toMatchObject({ code: 0, stderr: '' });
    expect((await cli('inspect', '-f', '{{.HostConfig.Memory}} {{.HostConfig.CpuShares}}', name)).stdout).toBe('33554432 512\n');
    const memoryRoot = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => / - cgroup \S+ \S*\bmemory\b/.test(l))!.split(' ')[4]!;
    const own = readFileSync('/proc/self/cgroup', 'utf8').split('\n').find((l) => l.split(':')[1]?.split(',').includes('memory'))!.split(':')[2]!;
    const dir = join(memoryRoot, own, 'dockgate', id);
    expect(readFileSync(join(dir, 'memory.limit_in_bytes'), 'utf8').trim()).toBe('33554432');
    // The container's processes were moved into the group the update made (seen from the host: the
    // container's own /proc/1/cgroup is relative to its cgroup namespace, cgroup-view.ts).
    const pid1 = (await cli('inspect', '-f', '{{.State.Pid}}', name)).stdout.trim();
    expect(readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n')).toContain(pid1);
    // Raising memory above the swap limit set with it writes the swap limit first.
    expect(await cli('update', '--memory', '128m', name)).toMatchObject({ code: 0 });
    expect(readFileSync(join(dir, 'memory.limit_in_bytes'), 'utf8').trim()).toBe('134217728');
    await cli('rm', '-f', name);
  });
  test('docker update of what the sandbox cannot change is refused, naming the field', async () => {
    const name = `dg-update-refused-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, 'busybox', 'sleep', '30')).code).toBe(0);
    const r = await cli('update', '--blkio-weight', '500', name);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('BlkioWeight: updating containers is not supported by the sandbox runtime');
    // The restart policy is the supervisor's, so it is updated (as dockerd allows).
    expect(await cli('update', '--restart', 'always', name)).toMatchObject({ code: 0 });
    expect((await cli('inspect', '-f', '{{.HostConfig.RestartPolicy.Name}}', name)).stdout).toBe('always\n');
    await cli('rm', '-f', name);
  });
  test('limits dockerd refuses are refused in its words: --memory 1m, --cpus 99', async () => {
    const small = await cli('run', '--rm', '--memory', '1m', 'busybox', 'true');
    expect(small.code).toBe(125);
    expect(small.stderr).toContain('Minimum memory limit allowed is 6MB');
    const many = await cli('run', '--rm', '--cpus', '99', 'busybox', 'true');
    expect(many.code).toBe(125);
    expect(many.stderr).toMatch(/Range of CPUs is from 0.01 to \d+\.00, as there are only \d+ CPUs available/);
  });
});

describeWithPeers('Docker CLI 28 against the sandbox runtime with cgroups off: each limit is refused by name', [program(CLI), bwrap], () => {
  const runtime = hasBwrap ? sandboxRuntime({ cgroups: false }) : undefined;
  const listening = runtime ? listenOnSocket(runtime) : undefined;
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });
  for (const [flag, field] of [[['--memory', '64m'], 'HostConfig.Memory'], [['--pids-limit', '10'], 'HostConfig.PidsLimit'], [['--cpus', '0.5'], 'HostConfig.NanoCpus'], [['--cpu-shares', '512'], 'HostConfig.CpuShares']] as const) {
    test(`${flag[0]} is refused with a message naming ${field}`, async () => {
      const r = await docker((await listening)!.socket, ['run', '--rm', ...flag, 'busybox', 'true']);
      expect(r.code).toBe(125);
      expect(r.stderr).toContain(`${field} is not supported by the sandbox runtime on this server`);
    });
  }
});
