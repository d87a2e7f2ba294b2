/**
 * docker-compose v1 (Debian's 1.29.2, on docker-py) runs a small project's steps on the sandbox
 * runtime as on dockerd (the reference): `up` (compose creates each container on the project's
 * network, then disconnects and connects it again with its aliases before starting it), a
 * healthy `ps`, DNS by service name through `exec -T`, `up --scale` and `down`.
 */
import { afterAll, expect, jest, test } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

jest.setTimeout(240_000);
/** dockerd's offline busybox (PEERS.md); another may be named when that one is damaged on a shared machine. */
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const project = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/compose-project');
const COMPOSE = '/usr/bin/docker-compose';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const root: PeerCheck = { name: 'root with iproute2 (a compose project\'s network is a user-defined network)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 };

type Result = { code: number; stdout: string; stderr: string };
function compose(socket: string, image: string, name: string, args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(COMPOSE, ['-p', name, ...args], { cwd: project, env: { PATH: '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, IMAGE: image }, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

let sandbox: { socket: string; close: () => Promise<void> } | undefined;
afterAll(async () => sandbox?.close());

const engines: [string, PeerCheck[], () => Promise<{ socket: string; image: string }>][] = [
  ['dockerd (the reference)', [program(COMPOSE), dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ socket: '/var/run/docker.sock', image: DOCKERD_IMAGE })],
  ['the sandbox runtime', [program(COMPOSE), bwrap, root], async () => {
    if (!sandbox) {
      const runtime: ContainerRuntime = sandboxRuntime();
      const listening = await listenOnSocket(runtime, '1.12-1.41');
      sandbox = { socket: listening.socket, close: async () => { await listening.close(); await runtime.close?.(); } };
    }
    return { socket: sandbox.socket, image: 'busybox' };
  }],
];

for (const [label, peers, open] of engines) {
  describeWithPeers(`docker-compose 1.29 runs a project on ${label}`, peers, () => {
    test('up, a healthy ps, DNS by service name with exec -T, up --scale and down', async () => {
      const { socket, image } = await open();
      const name = `dgc${process.pid}`;
      const run = (...args: string[]): Promise<Result> => compose(socket, image, name, args);
      try {
        const up = await run('up', '-d');
        expect({ code: up.code, stderr: up.stderr }).toMatchObject({ code: 0 });
        let ps = '';
        for (let i = 0; i < 30 && !/Up \(healthy\)/.test(ps); i++) {
          await new Promise((r) => setTimeout(r, 1000));
          ps = (await run('ps')).stdout;
        }
        expect(ps).toMatch(new RegExp(`${name}_web_1 .* Up \\(healthy\\)`));
        expect(ps).toMatch(new RegExp(`${name}_client_1 .* Up`));
        expect(await run('exec', '-T', 'client', 'busybox', 'wget', '-q', '-O', '-', 'http://web:8080/')).toMatchObject({ code: 0, stdout: 'hi\n' });
        expect((await run('up', '-d', '--scale', 'client=2')).code).toBe(0);
        expect((await run('ps', '-q')).stdout.trim().split('\n')).toHaveLength(3);
        const down = await run('down');
        expect(down.code).toBe(0);
        expect(down.stderr).toContain(`Removing network ${name}_default`);
      } finally {
        await run('down');
      }
    });
  });
}
