/**
 * What the specs that run one docker-py fixture (spec/interop/fixtures/docker-py-*.py) against
 * dockerd, the reference, and against the sandbox runtime share: the peers, the fixture runner
 * and the two engines.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '../fixtures');

/** The image dockerd runs the fixtures with (start-peers.sh makes busybox:local). */
export const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
export const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
export const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };

export type Probe = Record<string, unknown>;

/** Runs `fixture` (a file of spec/interop/fixtures) with `args` against the engine at `socket`: its JSON output. */
export function runDockerPyFixture(fixture: string, args: readonly string[], socket: string, timeout = 100_000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile('python3', [join(fixtures, fixture), ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}` }, timeout }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker-py probe failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

/** An engine a fixture runs against: its label, its peers, and how to get the fixture's output (and close it after). */
export type DockerPyEngine<T> = [string, PeerCheck[], () => Promise<{ out: T; close?: () => Promise<void> }>];

/** dockerd (the reference, with {@link DOCKERD_IMAGE}) and a sandbox runtime on a socket at API 1.12-1.41 (with busybox), each given to `probe`. */
export function dockerPyEngines<T>(probe: (socket: string, image: string) => Promise<T>): DockerPyEngine<T>[] {
  return [
    ['dockerd (the reference)', [dockerPy, dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ out: await probe('/var/run/docker.sock', DOCKERD_IMAGE) })],
    ['the sandbox runtime', [dockerPy, bwrap], async () => {
      const runtime: ContainerRuntime = sandboxRuntime();
      const listening = await listenOnSocket(runtime, '1.12-1.41');
      return { out: await probe(listening.socket, 'busybox'), close: async () => { await listening.close(); await runtime.close?.(); } };
    }],
  ];
}
