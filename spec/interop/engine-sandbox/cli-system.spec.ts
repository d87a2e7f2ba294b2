import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-sbx-sys-'));
const work = mkdtempSync(join(tmpdir(), 'dockgate-cli-sbx-save-'));
afterAll(() => {
  rmSync(configDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    execFile(CLI, args, { env, timeout: 30_000 }, (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

describeWithPeers('Docker CLI 28 system, image, network and volume commands against the sandbox runtime (the demo default)', [program(CLI), bwrap], () => {
  const runtime = hasBwrap ? sandboxRuntime() : undefined;
  const listening = runtime ? listenOnSocket(runtime, '1.12-1.41') : undefined;
  const cli = async (...args: string[]) => docker((await listening)!.socket, args);
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });

  test('docker info and docker system df answer without error', async () => {
    const info = await cli('info', '--format', '{{.ServerVersion}}|{{.OSType}}');
    expect(info).toMatchObject({ code: 0, stdout: '0.1.0|linux\n' });
    const df = await cli('system', 'df');
    expect(df.code).toBe(0);
    expect(df.stdout).toMatch(/^TYPE\s+TOTAL\s+ACTIVE\s+SIZE\s+RECLAIMABLE\n/);
  });
  test('docker images, image inspect, tag and rmi on the seeded busybox', async () => {
    expect((await cli('images', '--format', '{{.Repository}}:{{.Tag}}')).stdout.split('\n')).toContain('busybox:latest');
    const id = (await cli('image', 'inspect', '-f', '{{.Id}}', 'busybox')).stdout.trim();
    expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await cli('tag', 'busybox', 'dg-sbx-tag:1')).code).toBe(0);
    expect((await cli('image', 'inspect', '-f', '{{.Id}}', 'dg-sbx-tag:1')).stdout.trim()).toBe(id);
    expect(await cli('rmi', 'dg-sbx-tag:1')).toMatchObject({ code: 0, stdout: 'Untagged: dg-sbx-tag:1\n' });
  });
  test('docker save and docker load round-trip an image', async () => {
    const tar = join(work, 'busybox.tar');
    expect((await cli('save', '-o', tar, 'busybox')).code).toBe(0);
    expect(statSync(tar).size).toBeGreaterThan(100_000);
    expect((await cli('rmi', '-f', 'busybox:latest')).code).toBe(0);
    const load = await cli('load', '-i', tar);
    expect(load.code).toBe(0);
    expect(load.stdout).toContain('Loaded image: busybox:latest');
  });
  test('docker network ls shows bridge (each container has a namespace of its own), host and none; docker volume ls answers', async () => {
    expect((await cli('network', 'ls', '--format', '{{.Name}}')).stdout.split('\n').filter(Boolean).sort()).toEqual(['bridge', 'host', 'none']);
    expect((await cli('volume', 'ls')).code).toBe(0);
  });
});
