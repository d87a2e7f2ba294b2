import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

// docker-py's test_build_with_extra_hosts, and `docker run --add-host` or compose's extra_hosts:
// the fixture (fixtures/docker-py-extra-hosts.py) against dockerd on this machine, whose answers
// are the reference, and against the sandbox runtime, which must give the same.
const here = dirname(fileURLToPath(import.meta.url));
jest.setTimeout(180_000);
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };

type Probe = Record<string, unknown>;
function probe(socket: string, image: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    execFile('python3', [join(here, '../fixtures/docker-py-extra-hosts.py'), image, `dg${process.pid % 100000}eh`], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}` }, timeout: 160_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker-py probe failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as Probe);
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
  describeWithPeers(`docker-py 7 against ${label}: HostConfig.ExtraHosts adds its entries to /etc/hosts`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('each NAME:IP entry is a line "IP<tab>NAME" of the container\'s /etc/hosts, in order, IPv6 addresses too, on its network and with --network none', () => {
      expect(out.run).toEqual(['127.0.0.1\textrahost.local.test', '10.1.2.3\thello.world.test', '2001:db8::1\tsix.test']);
      expect(out.run_none).toEqual(['10.9.9.9\tnone.test']);
    });
    test('an entry without an IP, or with one that is not an address, is a 400 in dockerd\'s words', () => {
      expect(out.bad_ip).toEqual(['APIError', 400, 'invalid IP address in add-host: "not-an-ip"']);
      expect(out.no_ip).toEqual(['APIError', 400, 'bad format for add-host: "x.test"']);
    });
    test('a build\'s extra_hosts, every repeated extrahosts parameter, reach its RUN steps\' /etc/hosts (docker-py\'s test_build_with_extra_hosts)', () => {
      expect(out.build_errors).toEqual([]);
      expect(out.build).toEqual(['127.0.0.1\textrahost.local.test', '127.0.0.1\thello.world.test']);
    });
  });
}
