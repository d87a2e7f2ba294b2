import { test, expect, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program } from '../../support/peers.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const IMAGE = 'busybox:local';
const RANGE = '1.12-1.41';
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-sys-'));
afterAll(() => rmSync(configDir, { recursive: true, force: true }));

function run(file: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
const docker = (socket: string, args: string[]) => run(CLI, args, { DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir });

const runtimes: [string, () => ContainerRuntime, boolean][] = [
  ['process runtime', () => processRuntime({ images: { [IMAGE]: { program: '/bin/busybox' } } }), false],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), true],
];

for (const [label, make, forwards] of runtimes) {
  describeWithPeers(`Docker CLI 28 system, image, network and volume commands through dockgate (API 1.41, ${label})`, [program(CLI), dockerd(), dockerImage(IMAGE)], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, RANGE);
    afterAll(async () => {
      await (await listening).close();
      await runtime.close?.();
    });

    test('docker info prints the server section with dockgate\'s version and no error', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['info', '--format', '{{.ServerVersion}}|{{.OSType}}|{{.NCPU}}|{{.Driver}}|{{.Images}}']);
      expect(r.stderr).toBe('');
      const [version, os, ncpu, driver, images] = r.stdout.trim().split('|');
      expect([version, os]).toEqual(['0.1.0', 'linux']);
      expect(Number(ncpu)).toBeGreaterThan(0);
      expect(driver).toBe(forwards ? 'overlay2' : 'none');
      expect(Number(images)).toBeGreaterThanOrEqual(1);
      const plain = await docker(socket, ['info']);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toContain('Server Version: 0.1.0');
    });
    test('docker version shows the server\'s language runtime as its Go version (node, in Go\'s form), and its Node version', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['version', '--format', '{{.Server.Version}}|{{.Server.GoVersion}}|{{(index .Server.Components 0).Details.NodeVersion}}']);
      expect(r.stdout.trim()).toBe(`0.1.0|node${process.versions.node}|${process.version}`);
    });
    test('docker images, image inspect, tag, rmi', async () => {
      const { socket } = await listening;
      const images = await docker(socket, ['images', '--format', '{{.Repository}}:{{.Tag}}']);
      expect(images.code).toBe(0);
      expect(images.stdout.split('\n')).toContain(IMAGE);
      const id = (await docker(socket, ['image', 'inspect', '-f', '{{.Id}}', IMAGE])).stdout.trim();
      expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
      const target = `dockgate-tag-test:${forwards ? 'd' : 'p'}${Date.now()}`;
      expect((await docker(socket, ['tag', IMAGE, target])).code).toBe(0);
      expect((await docker(socket, ['image', 'inspect', '-f', '{{.Id}}', target])).stdout.trim()).toBe(id);
      const rmi = await docker(socket, ['rmi', target]);
      expect(rmi).toMatchObject({ code: 0, stdout: `Untagged: ${target}\n` });
      const gone = await docker(socket, ['image', 'inspect', target]);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toContain(`No such image: ${target}`);
    });
    test('docker system df', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['system', 'df', '--format', '{{.Type}}']);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim().split('\n')).toEqual(['Images', 'Containers', 'Local Volumes', 'Build Cache']);
    });
    test('docker network ls and network inspect', async () => {
      const { socket } = await listening;
      const ls = await docker(socket, ['network', 'ls', '--format', '{{.Name}} {{.Driver}} {{.Scope}}']);
      expect(ls.code).toBe(0);
      expect(ls.stdout.split('\n')).toContain('host host local');
      const inspect = await docker(socket, ['network', 'inspect', '-f', '{{.Name}} {{.Driver}}', 'host']);
      expect(inspect.stdout.trim()).toBe('host host');
    });
    test('docker volume ls; volume create and rm where the runtime has volumes, 501 where not', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['volume', 'ls', '-q']);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      const name = `dockgate-cli-vol-${Date.now()}`;
      const created = await docker(socket, ['volume', 'create', name]);
      if (forwards) {
        expect(created).toMatchObject({ code: 0, stdout: `${name}\n` });
        expect((await docker(socket, ['volume', 'ls', '-q', '--filter', `name=${name}`])).stdout).toBe(`${name}\n`);
        expect(await docker(socket, ['volume', 'rm', name])).toMatchObject({ code: 0, stdout: `${name}\n` });
      } else {
        expect(created.code).not.toBe(0);
        expect(created.stderr).toContain('creating volumes is not supported by the process runtime');
      }
    });
    test('docker image history', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['image', 'history', '--format', '{{.ID}}', IMAGE]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim().split('\n').length).toBeGreaterThanOrEqual(1);
    });
    if (forwards) {
      test('docker save streams the engine\'s tarball; docker load streams one back', async () => {
        const { socket } = await listening;
        const dir = mkdtempSync(join(tmpdir(), 'dockgate-save-'));
        try {
          const file = join(dir, 'busybox.tar');
          expect((await docker(socket, ['save', '-o', file, IMAGE])).code).toBe(0);
          expect(statSync(file).size).toBeGreaterThan(100_000);
          const load = await docker(socket, ['load', '-i', file]);
          expect(load).toMatchObject({ code: 0 });
          expect(load.stdout).toContain(`Loaded image: ${IMAGE}`);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    } else {
      test('docker save and docker load answer 501 naming the feature and the runtime', async () => {
        const { socket } = await listening;
        const save = await docker(socket, ['save', '-o', join(configDir, 'x.tar'), IMAGE]);
        expect(save.code).not.toBe(0);
        expect(save.stderr).toContain('saving images (docker save) is not supported by the process runtime');
        const load = await docker(socket, ['load', '-i', '/bin/busybox']);
        expect(load.code).not.toBe(0);
        expect(load.stderr).toContain('loading images (docker load) is not supported by the process runtime');
      });
    }
    describeWithPeers('docker-py', [program('python3', ['-c', 'import docker'])], () => {
      test('images.list() (each image inspected by id) and info()', async () => {
        const { socket } = await listening;
        const script = [
          'import docker, json',
          `c = docker.DockerClient(base_url="unix://${socket}", version="1.41")`,
          'images = c.images.list()',
          'info = c.info()',
          'print(json.dumps({"tags": sorted(t for i in images for t in i.tags), "version": info["ServerVersion"], "containers": info["Containers"]}))',
        ].join('\n');
        const r = await run('python3', ['-c', script], {});
        expect(r.stderr).toBe('');
        const out = JSON.parse(r.stdout) as { tags: string[]; version: string; containers: number };
        expect(out.tags).toContain(IMAGE);
        expect(out.version).toBe('0.1.0');
        expect(out.containers).toEqual(expect.any(Number));
      });
    });
  });
}
