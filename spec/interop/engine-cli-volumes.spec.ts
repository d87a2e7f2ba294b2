/**
 * Docker CLI 28 named volumes (`-v name:/path`, `docker volume …`) through dockgate, on the sandbox runtime and
 * on dockerd behind the Docker runtime (the reference: the same commands, the same answers).
 */
import { test, expect, afterAll } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../support/peers.js';
import { type ContainerRuntime } from '../../lib/engine/index.js';
import { sandboxRuntime } from '../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../lib/engine/runtime/docker/index.js';
import { listenOnSocket } from '../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-volumes-'));
afterAll(() => rmSync(configDir, { recursive: true, force: true }));
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasBwrap };

function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(CLI, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
    child.stdin.end();
  });
}

const runtimes: [string, () => ContainerRuntime, string, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), 'busybox', [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
];

for (const [label, make, image, peers] of runtimes) {
  describeWithPeers(`Docker CLI 28 named volumes through dockgate (API 1.41, ${label})`, [program(CLI), ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, '1.12-1.41');
    const stamp = `${process.pid}-${Date.now()}`;
    const names: string[] = [];
    const cli = async (...args: string[]) => docker((await listening).socket, args);
    const volume = `dg-vols-v-${stamp}`;
    const named = (what: string): string => {
      names.push(`dg-vols-${what}-${stamp}`);
      return names.at(-1)!;
    };
    afterAll(async () => {
      await cli('rm', '-f', ...names);
      await cli('volume', 'rm', '-f', volume);
      await (await listening).close();
      await runtime.close?.();
    });

    test('docker volume create, ls and inspect show a local volume', async () => {
      expect(await cli('volume', 'create', '--label', 'purpose=spec', volume)).toMatchObject({ code: 0, stdout: `${volume}\n` });
      expect((await cli('volume', 'ls', '-q', '--filter', `name=${volume}`)).stdout).toBe(`${volume}\n`);
      expect((await cli('volume', 'inspect', '-f', '{{.Driver}} {{.Scope}} {{.Labels.purpose}}', volume)).stdout).toBe('local local spec\n');
    });
    test('two containers share the volume: one writes through -v, the other reads through --mount', async () => {
      const writer = named('writer');
      expect((await cli('run', '--name', writer, '-v', `${volume}:/data`, image, 'sh', '-c', 'echo shared-data > /data/f')).code).toBe(0);
      const reader = named('reader');
      expect(await cli('run', '--name', reader, '--mount', `type=volume,src=${volume},dst=/in,readonly`, image, 'cat', '/in/f')).toMatchObject({ code: 0, stdout: 'shared-data\n' });
      expect((await cli('inspect', '-f', '{{range .Mounts}}{{.Type}} {{.Name}} {{.Destination}} {{.RW}}{{end}}', writer)).stdout).toBe(`volume ${volume} /data true\n`);
      expect((await cli('inspect', '-f', '{{range .Mounts}}{{.Type}} {{.Name}} {{.Destination}} {{.RW}}{{end}}', reader)).stdout).toBe(`volume ${volume} /in false\n`);
    });
    test('docker volume rm of a volume in use fails; once its containers are gone it is removed', async () => {
      const inUse = await cli('volume', 'rm', volume);
      expect(inUse.code).not.toBe(0);
      expect(inUse.stderr).toContain(`remove ${volume}: volume is in use`);
      expect((await cli('rm', ...names)).code).toBe(0);
      expect((await cli('volume', 'rm', volume)).code).toBe(0);
      const gone = await cli('volume', 'inspect', volume);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toContain('no such volume');
    });
  });
}
