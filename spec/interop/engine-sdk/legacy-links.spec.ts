import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

// Issue 33, legacy links (docker-py's test_create_with_links and test_connect_with_links,
// docker-compose v1's `links:`): the fixture's links section (fixtures/docker-py-client-gaps.py)
// against dockerd on this machine, whose answers are the reference, and the sandbox runtime.
const here = dirname(fileURLToPath(import.meta.url));
jest.setTimeout(300_000);
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
const root: PeerCheck = { name: 'root with iproute2 (user-defined networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };

type Probe = Record<string, unknown>;
function probe(socket: string, image: string, section: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    execFile('python3', [join(here, '../fixtures/docker-py-client-gaps.py'), image, `dg${process.pid % 100000}lk`, section], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}` }, timeout: 280_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker-py probe failed: ${stderr || error.message}`));
      else resolve((JSON.parse(stdout) as Record<string, Probe>)[section]!);
    });
  });
}

const engines: [string, PeerCheck[], () => Promise<{ out: Probe; close?: () => Promise<void> }>][] = [
  ['dockerd (the reference)', [dockerPy, dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ out: await probe('/var/run/docker.sock', DOCKERD_IMAGE, 'links') })],
  ['the sandbox runtime', [dockerPy, bwrap, root], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    return { out: await probe(listening.socket, 'busybox', 'links_bridge'), close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

for (const [label, peers, open] of engines) {
  const sandbox = label === 'the sandbox runtime';
  describeWithPeers(`docker-py 7 against ${label}: legacy links on user-defined networks`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('EndpointsConfig.Links at create: shown as given before and after the start; the alias resolves to the linked container for the linking one only', () => {
      expect(out).toMatchObject({
        endpoint_links_created: ['<prefix>lnk-a:bar'], endpoint_links_started: ['<prefix>lnk-a:bar'], endpoint_alias_resolves: 'target', alias_for_others: 'nothing',
      });
    });
    test('EndpointConfig.Links at network connect: shown as given; the alias resolves on that network', () => {
      expect(out).toMatchObject({ connect_with_links: ['ok'], connect_links_shown: ['<prefix>lnk-a:baz'], connect_alias_resolves: 'target' });
    });
    test(sandbox
      ? 'HostConfig.Links on a user network is a link there (the Docker CLI sends --link in both); a malformed entry is refused at create; on the default bridge a link is taken at create (its /etc/hosts line and variables: binds-groups.spec.ts)'
      : 'dockerd 20.10 drops HostConfig.Links on a user network (the alias does not resolve) and takes a malformed entry at create', () => {
      if (sandbox) {
        expect(out).toMatchObject({
          host_links_resolve: 'target',
          bad_format: ['APIError', 'NetworkingConfig.EndpointsConfig "<prefix>lnk": bad format for links: <prefix>lnk-a:b:c'],
          default_bridge: ['ok'],
        });
      } else {
        expect(out).toMatchObject({ host_links_resolve: 'nothing', bad_format: ['ok'] });
      }
    });
    test('a link to a name no container has yet is taken at create and at connect, shown as given; its alias resolves once a container of that name is on the network (docker-py\'s test_create_with_links, test_connect_with_links)', () => {
      expect(out).toMatchObject({
        no_such_target: ['ok'],
        late_links_shown: ['<prefix>lnk-late:qux'], late_connect: ['ok'], late_connect_shown: ['<prefix>lnk-late:quux'],
        late_alias_resolves: 'target', late_connect_resolves: 'target',
      });
    });
  });
}
