import { test, expect, afterAll } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program } from '../../support/peers.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { listenOnSocket } from '../../engine/helpers.js';
import { DOCKER_CLI } from '../support/docker-cli.js';
import { CGROUPS_V1 } from '../support/sandbox-cli.js';

const busybox = { name: '/bin/busybox (busybox-static)', available: () => existsSync('/bin/busybox') };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));

/** Host processes whose command line is exactly `sleep <n>` (the container's, by their unique argument). */
function sleepers(n: number): string[] {
  try {
    return execFileSync('pgrep', ['-f', `^sleep ${n}$`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

describeWithPeers('process runtime: each container is tracked by a cgroup, so kill and rm reach every process', [program(DOCKER_CLI), busybox, CGROUPS_V1], () => {
  const runtime = existsSync('/bin/busybox') ? processRuntime({ images: { 'busybox:latest': { program: '/bin/busybox' } } }) : undefined;
  const listening = runtime ? listenOnSocket(runtime) : undefined;
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });
  const cli = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', DOCKER_HOST: `unix://${(await listening)!.socket}`, DOCKER_CONFIG: configDir };
    return new Promise((resolve) => {
      execFile(DOCKER_CLI, args, { env, timeout: 20_000 }, (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }));
    });
  };

  test('sh -c \'setsid sleep 1002 & sleep 1003\': docker rm -f returns and no sleep remains (the setsid child too)', async () => {
    const name = `dg-setsid-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, 'busybox', 'sh', '-c', 'setsid sleep 1002 & sleep 1003')).code).toBe(0);
    for (let i = 0; i < 100 && sleepers(1002).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sleepers(1002)).toHaveLength(1);
    const removed = await cli('rm', '-f', name);
    expect(removed.code).toBe(0);
    for (let i = 0; i < 50 && sleepers(1002).length + sleepers(1003).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect([...sleepers(1002), ...sleepers(1003)]).toEqual([]);
  });

  test('when the command exits, a setsid child it left behind goes with it (as when a container\'s pid 1 exits)', async () => {
    expect((await cli('run', '--rm', 'busybox', 'sh', '-c', 'setsid sleep 1004 & sleep 0.2')).code).toBe(0);
    for (let i = 0; i < 50 && sleepers(1004).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sleepers(1004)).toEqual([]);
  });

  test('the container runs in a pids group of its own with the default limit of 2048 (podman\'s)', async () => {
    const name = `dg-pids-${Date.now()}`;
    const started = await cli('run', '-d', '--name', name, 'busybox', 'sleep', '1005');
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    for (let i = 0; i < 100 && sleepers(1005).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const pid = sleepers(1005)[0]!;
    const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.split(':')[1]?.split(',').includes('pids'))!;
    expect(line).toMatch(new RegExp(`/dockgate/${id}$`));
    const pidsRoot = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => / - cgroup \S+ \S*\bpids\b/.test(l))!.split(' ')[4]!;
    expect(readFileSync(join(pidsRoot, line.split(':')[2]!, 'pids.max'), 'utf8').trim()).toBe('2048');
    await cli('rm', '-f', name);
  });

  test('an exec joins the container\'s group: a setsid child it leaves is gone after docker rm -f', async () => {
    const name = `dg-exec-setsid-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, 'busybox', 'sleep', '1009')).code).toBe(0);
    expect((await cli('exec', name, 'sh', '-c', 'setsid sleep 1008 >/dev/null 2>&1 < /dev/null &')).code).toBe(0);
    for (let i = 0; i < 100 && sleepers(1008).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(sleepers(1008)).toHaveLength(1);
    expect((await cli('rm', '-f', name)).code).toBe(0);
    for (let i = 0; i < 50 && sleepers(1008).length + sleepers(1009).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect([...sleepers(1008), ...sleepers(1009)]).toEqual([]);
  });

  test('docker top lists the setsid child too (the group, not the process tree)', async () => {
    const name = `dg-top-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, 'busybox', 'sh', '-c', 'setsid sleep 1006 & sleep 1007')).code).toBe(0);
    for (let i = 0; i < 100 && sleepers(1006).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const top = await cli('top', name);
    expect(top.stdout).toContain('sleep 1006');
    expect(top.stdout).toContain('sleep 1007');
    await cli('rm', '-f', name);
  });
});

describeWithPeers('process runtime options: cgroups and pidsLimit are checked at construction', [busybox], () => {
  const images = { 'busybox:latest': { program: '/bin/busybox' } };
  test('pidsLimit must be a positive integer; cgroups a boolean', () => {
    expect(() => processRuntime({ images, pidsLimit: 0 })).toThrow('processRuntime option "pidsLimit" must be a positive integer');
    expect(() => processRuntime({ images, cgroups: 'yes' as unknown as boolean })).toThrow('processRuntime option "cgroups" must be a boolean');
  });
});
