import { describe, test, expect, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program } from '../support/peers.js';
import { dockerRuntime, processRuntime, type ContainerRuntime } from '../../lib/engine/index.js';
import { listenOnSocket } from '../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const IMAGE = 'busybox:local';

/** Runs the Docker CLI 28 against a socket, asynchronously (the server lives in this process). */
function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    execFile(CLI, args, { env, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));

const runtimes: [string, () => ContainerRuntime, string[]][] = [
  ['process runtime', () => processRuntime({ images: { [IMAGE]: { program: '/bin/busybox' } } }), []],
  // dockerd here runs with --bridge=none, so containers need --network none.
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), ['--network', 'none']],
];

for (const [label, make, netArgs] of runtimes) {
  describeWithPeers(`Docker CLI 28 drives containers through dockgate (API 1.28, ${label})`, [program(CLI), dockerd(), dockerImage(IMAGE)], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime);
    afterAll(async () => {
      await (await listening).close();
      await runtime.close?.();
    });

    test('docker version negotiates down to 1.28', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['version', '--format', '{{.Client.APIVersion}} {{.Server.APIVersion}} {{.Server.MinAPIVersion}}']);
      expect(r.stdout.trim()).toBe('1.28 1.28 1.12');
    });
    test('docker run --rm IMAGE echo hello prints hello (attach upgrade + events wait) and removes it', async () => {
      const { socket } = await listening;
      const name = `dg-run-${Date.now()}`;
      const r = await docker(socket, ['run', '--rm', ...netArgs, '--name', name, IMAGE, 'echo', 'hello']);
      expect(r).toMatchObject({ code: 0, stdout: 'hello\n' });
      const ps = await docker(socket, ['ps', '-a', '--filter', `name=${name}`, '--format', '{{.Names}}']);
      expect(ps.stdout.trim()).toBe('');
    });
    test('docker run returns the container exit code', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['run', '--rm', ...netArgs, IMAGE, 'sh', '-c', 'echo to-stderr >&2; exit 3']);
      expect(r.code).toBe(3);
      expect(r.stderr).toBe('to-stderr\n');
    });
    test('docker create, start, wait, logs, ps -a, rm', async () => {
      const { socket } = await listening;
      const name = `dg-life-${Date.now()}`;
      const created = await docker(socket, ['create', ...netArgs, '--name', name, IMAGE, 'sh', '-c', 'echo out; echo err >&2; exit 4']);
      expect(created.code).toBe(0);
      expect(created.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
      expect((await docker(socket, ['start', name])).stdout.trim()).toBe(name);
      expect((await docker(socket, ['wait', name])).stdout.trim()).toBe('4');
      const logs = await docker(socket, ['logs', name]);
      expect(logs).toMatchObject({ code: 0, stdout: 'out\n', stderr: 'err\n' });
      const ps = await docker(socket, ['ps', '-a', '--filter', `name=${name}`, '--format', '{{.Names}}|{{.Status}}']);
      expect(ps.stdout.trim()).toMatch(new RegExp(`^${name}\\|Exited \\(4\\) `));
      expect((await docker(socket, ['rm', name])).stdout.trim()).toBe(name);
      const gone = await docker(socket, ['logs', name]);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toBe(`Error response from daemon: No such container: ${name}\n`);
    });
  });
}
