import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

// Issue 33: what clients' own suites (docker-py's, docker-compose's, another SDK's) do that worked
// on dockerd and failed on dockgate. One docker-py script probes each detail
// (fixtures/docker-py-client-gaps.py); it runs against dockerd on this machine, whose answers are
// the reference, and against the sandbox runtime, which must give the same ones.
const here = dirname(fileURLToPath(import.meta.url));
jest.setTimeout(240_000);
/** dockerd's offline busybox (PEERS.md); another may be named when that one is damaged on a shared machine. */
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const root: PeerCheck = { name: 'root with iproute2 (user-defined networks make network namespaces)', available: () => process.getuid?.() === 0 && spawnSync('ip', ['-V']).status === 0 };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };

type Probe = Record<string, Record<string, unknown>>;
/** What dockerd writes on an exec's stream when its detach keys end it. */
const EXEC_DETACHED = 'exec attach failed: error on attach stdin: read escape sequence\r\n';
const SECTIONS = ['networks', 'detach_keys', 'registry_routes', 'etc_files'];

function probe(socket: string, image: string, sections = SECTIONS): Promise<Probe> {
  const prefix = `dg${process.pid % 100000}x`;
  return new Promise((resolve, reject) => {
    execFile('python3', [join(here, '../fixtures/docker-py-client-gaps.py'), image, prefix, ...sections], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}` }, timeout: 200_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker-py probe failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as Probe);
    });
  });
}

const engines: [string, PeerCheck[], () => Promise<{ out: Probe; close?: () => Promise<void> }>][] = [
  ['dockerd (the reference)', [dockerPy, dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ out: await probe('/var/run/docker.sock', DOCKERD_IMAGE) })],
  ['the sandbox runtime', [dockerPy, bwrap, root], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    return { out: await probe(listening.socket, 'busybox', [...SECTIONS, 'isolation', 'etc_files_bridge']), close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

for (const [label, peers, open] of engines) {
  const sandbox = label === 'the sandbox runtime';
  describeWithPeers(`docker-py 7 against ${label}: details of docker-py's and docker-compose's suites`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('an IPAM pool whose Gateway is null is taken; IPAM Options is null and the network\'s Options {}', () => {
      expect(out.networks!.null_gateway).toEqual({ IPAM: { Driver: 'default', Options: null, Config: [{ Subnet: '10.91.3.0/24' }] }, Options: {} });
    });
    test('a network name with a space is taken, as dockerd takes any name', () => {
      expect(out.networks!.name_with_space).toEqual(['ok']);
    });
    test('the bridge driver\'s MTU and inter-container options are kept and the MTU is on the container\'s interface', () => {
      expect(out.networks!.mtu_options).toEqual({ 'com.docker.network.driver.mtu': '1400', 'com.docker.network.bridge.enable_icc': 'true' });
      expect(out.networks!.mtu_seen).toBe('1');
    });
    test('a created container is disconnected from its network, connected again with aliases, and started with them (docker-compose up)', () => {
      expect(out.networks).toMatchObject({
        disconnect_created: ['ok'], networks_after_disconnect: [], connect_created: ['ok'], aliases_after_start: ['web', '<short id>'], alias_resolves: true,
      });
    });
    test('force=True disconnects; disconnecting a container that is not connected is an error, forced or not', () => {
      const notConnected = ['APIError', 'container <id> is not connected to network <prefix>compose'];
      expect(out.networks).toMatchObject({ force_disconnect: ['ok'], force_disconnect_again: notConnected, disconnect_again: notConnected });
    });
    test(sandbox ? 'a MAC address at connect is honored: the interface has it' : 'a MAC address at connect is taken (dockerd 20.10 ignores it: the MAC stays the one from the address)', () => {
      expect(out.networks!.connect_with_mac).toEqual(['ok']);
      if (sandbox) expect([out.networks!.mac_shown, out.networks!.mac_inside]).toEqual(['02:42:0a:5b:00:99', '1']);
      else expect([out.networks!.mac_shown, out.networks!.mac_inside]).toEqual([expect.stringMatching(/^02:42:/), '0']);
    });
    test('a MAC address given at connect to a created container shows in its inspect before any start', () => {
      expect([out.networks!.connect_created_with_mac, out.networks!.mac_shown_created]).toEqual([['ok'], '02:42:ac:11:00:02']);
    });
    test(sandbox ? 'a driver option the sandbox cannot honor (the host bridge\'s name) is refused by name' : 'dockerd takes the host bridge\'s name as a driver option', () => {
      if (sandbox) expect(out.networks!.bridge_name_option).toEqual(['APIError', 'network option com.docker.network.bridge.name is not supported by the sandbox runtime']);
      else expect(out.networks!.bridge_name_option).toEqual(['ok']);
    });
    test('detach keys from docker-py\'s config file (`detachKeys` in the exec create body) end an exec session, as the default keys do; exec inspect shows them', () => {
      expect(out.detach_keys).toEqual({
        attach_default: 'closed', attach_config: 'closed', exec_default: `closed${EXEC_DETACHED}`, exec_config: `closed${EXEC_DETACHED}`, exec_inspect_default: '', exec_inspect_config: Buffer.from([16]).toString('base64'),
      });
    });
    test(sandbox
      ? 'registry search, registry manifest inspection and BuildKit\'s session are 501s naming the feature, not 404 page not found'
      : 'dockerd answers registry search and manifest inspection from the registry (none is reachable here) and refuses a session without its upgrade', () => {
      const routes = out.registry_routes as Record<string, [number, string]>;
      for (const answer of Object.values(routes)) expect(answer[1]).not.toBe('page not found');
      if (sandbox) {
        expect(routes.search).toEqual([501, expect.stringMatching(/^searching a registry \(GET \/images\/search, docker search\) is not supported by dockgate/)]);
        expect(routes.distribution).toEqual([501, expect.stringMatching(/^registry manifest inspection \(GET \/distribution\/\{name\}\/json\) is not supported by dockgate/)]);
        expect(routes.session).toEqual([501, expect.stringMatching(/^BuildKit sessions \(POST \/session\) are not supported by dockgate .*DOCKER_BUILDKIT=0/)]);
      } else {
        expect(routes.search![0]).toBe(500);
        expect(routes.distribution).toEqual([500, expect.stringContaining('127.0.0.1:9')]);
        expect(routes.session).toEqual([400, 'no upgrade proto in request']);
      }
    });
    test('/etc/hostname, /etc/hosts and /etc/resolv.conf are in a created container (archive GET), owned by its root, and its hostname is its short id (the host\'s with --network host)', () => {
      const made = { hostname: { uid: 0, regular: true }, hosts: { uid: 0, regular: true }, 'resolv.conf': { uid: 0, regular: true } };
      expect(out.etc_files).toEqual({
        none: { before_start: made, inside: ['<short id>', '<short id>', '0:0', '0:0', '0:0', '2', ''] },
        host: { before_start: made, inside: ['<host name>', '<host name>', '0:0', '0:0', '0:0', expect.stringMatching(/^\d+$/), ''] },
      });
      if (sandbox) expect(out.etc_files_bridge).toEqual({ bridge: { before_start: made, inside: ['<short id>', '<short id>', '0:0', '0:0', '0:0', '2', ''] } });
    });
    // dockerd here runs with --iptables=false, which cannot keep containers apart: the sandbox only.
    if (sandbox) {
      test('enable_icc=false: a container reaches the network\'s DNS but not another container; true (the default) reaches it', () => {
        expect(out.isolation).toEqual({ false: ['dns', 'nc:', 'timed', 'out'], true: ['dns', 'hi'] });
      });
    }
  });
}
