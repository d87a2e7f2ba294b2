import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

// Issue 33, create and inspect details of docker-py's suite (its logging and runtime tests): the
// fixture's create_inspect section (fixtures/docker-py-client-gaps.py) against dockerd on this
// machine, whose answers are the reference, and against the sandbox runtime, which gives the same.
const here = dirname(fileURLToPath(import.meta.url));
jest.setTimeout(120_000);
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };

type Probe = Record<string, unknown>;
function probe(socket: string, image: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    execFile('python3', [join(here, '../fixtures/docker-py-client-gaps.py'), image, `dg${process.pid % 100000}ci`, 'create_inspect'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}` }, timeout: 100_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker-py probe failed: ${stderr || error.message}`));
      else resolve((JSON.parse(stdout) as { create_inspect: Probe }).create_inspect);
    });
  });
}

const engines: [string, PeerCheck[], () => Promise<{ out: Probe; close?: () => Promise<void> }>][] = [
  ['dockerd (the reference)', [dockerPy, dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ out: await probe('/var/run/docker.sock', DOCKERD_IMAGE) })],
  ['the sandbox runtime', [dockerPy, bwrap], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    return { out: await probe(listening.socket, 'busybox'), close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

for (const [label, peers, open] of engines) {
  describeWithPeers(`docker-py 7 against ${label}: inspect shows the create as asked`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('LogConfig.Config is what was asked ({} when nothing), not the server\'s default rotation', () => {
      expect(out).toMatchObject({
        log_not_given: { Type: 'json-file', Config: {} },
        log_type_only: { Type: 'json-file', Config: {} },
        log_max_file: { Type: 'json-file', Config: { 'max-file': '100' } },
        log_max_size: { Type: 'json-file', Config: { 'max-size': '1m' } },
        log_none: { Type: 'none', Config: {} },
      });
    });
    test('HostConfig.Runtime is the OCI runtime\'s name clients know (runc), the default one in /info; a create asking for runc is taken and one asking for a runtime the server lacks is refused by name', () => {
      expect(out).toMatchObject({
        runtime_default: 'runc', runtime_runc: ['ok'], runtime_runc_shown: 'runc', default_runtime: 'runc',
        runtime_unknown: ['APIError', 'Unknown runtime specified nosuch'],
      });
    });
  });
}
