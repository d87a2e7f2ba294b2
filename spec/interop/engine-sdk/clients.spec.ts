import { test, expect, afterAll, jest } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
const RANGE = '1.12-1.41';
jest.setTimeout(90_000);
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter (util-linux)', available: () => hasBwrap };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };
const testcontainers: PeerCheck = { name: 'testcontainers 10 (npm devDependency)', available: () => existsSync(join(here, '../../../node_modules/testcontainers/package.json')) };

function run(file: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Whether dockerd itself knows a container id: proves a client did not fall back to /var/run/docker.sock. */
async function dockerdKnows(id: string): Promise<boolean> {
  if (!existsSync('/var/run/docker.sock')) return false;
  return (await socketRequest('/var/run/docker.sock', 'GET', `/containers/${id}/json`)).status === 200;
}

const runtimes: [string, () => ContainerRuntime, string, PeerCheck[], boolean][] = [
  ['sandbox runtime (the demo default)', () => sandboxRuntime(), 'busybox:latest', [bwrap], false],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')], true],
];

for (const [label, make, image, peers, forwards] of runtimes) {
  describeWithPeers(`docker-py 7 through dockgate (${label})`, [dockerPy, ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, RANGE);
    afterAll(async () => {
      await (await listening).close();
      await runtime.close?.();
    });
    test('containers.run, exec_run, restart, images.list and info all answer as with dockerd', async () => {
      const { socket } = await listening;
      const name = `dg-py-${process.pid}-${Date.now()}`;
      const r = await run('python3', [join(here, '../fixtures/docker-py-client.py'), image, name], { DOCKER_HOST: `unix://${socket}` });
      expect(r.stderr).toBe('');
      const out = JSON.parse(r.stdout);
      expect(out.run).toBe('ran by docker-py\n');
      // Both streams, demultiplexed by docker-py (their order between streams is the scheduler's).
      expect(out.exec_run.exit_code).toBe(0);
      expect(out.exec_run.output.split('\n').sort()).toEqual(['', 'exec_run', 'to-stderr']);
      expect(out.exec_run_failed).toBe(4);
      expect(out.restart).toEqual({ status: 'running', started_again: true });
      expect(out.images).toContain(image);
      expect(out.info.OSType).toBe('linux');
      expect(out.info.ServerVersion).toBe('0.1.0');
    });
  });

  describeWithPeers(`testcontainers-node 10 through dockgate (${label})`, [testcontainers, ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, RANGE);
    afterAll(async () => {
      await (await listening).close();
      await runtime.close?.();
    });
    test('GenericContainer with a log wait strategy starts, exec answers, stop stops; dockgate ran it', async () => {
      const { socket } = await listening;
      const seen: string[] = [];
      const r = await run(process.execPath, [join(here, '../fixtures/testcontainers-client.mjs'), image], {
        DOCKER_HOST: `unix://${socket}`,
        TESTCONTAINERS_RYUK_DISABLED: 'true',
        TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
      });
      seen.push(r.stderr);
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
      expect(out.exec).toEqual({ exitCode: 0, output: 'exec through testcontainers\n' });
      // It used dockgate, not a silent fallback to /var/run/docker.sock: dockgate lists the
      // container (exited after stop) and, for the sandbox runtime, dockerd has never heard of it.
      const listed = JSON.parse((await socketRequest(socket, 'GET', '/v1.41/containers/json?all=1')).body.toString()) as { Id: string; State: string }[];
      expect(listed.find((c) => c.Id === out.id)?.State).toBe('exited');
      if (!forwards) expect(await dockerdKnows(out.id)).toBe(false);
      await socketRequest(socket, 'DELETE', `/v1.41/containers/${out.id}?force=1`);
    });
  });
}
