import { afterAll, beforeAll, expect, jest, test } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import type { ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

// Issue 33: docker-py's bind tests (a host folder of host root's, written by container root) and
// GroupAdd, through the fixture fixtures/docker-py-binds-groups.py, against dockerd on this machine
// (the reference) and against the sandbox runtime (container root an unprivileged host uid of its
// user namespace), which gives the same answers.
const here = dirname(fileURLToPath(import.meta.url));
jest.setTimeout(180_000);
const DOCKERD_IMAGE = process.env.DOCKGATE_DOCKERD_IMAGE ?? 'busybox:local';
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap) and /bin/busybox (busybox-static)', available: () => spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };

type Probe = Record<string, Record<string, unknown>>;
function probe(socket: string, image: string, sections = ['binds', 'group_add']): Promise<Probe> {
  return new Promise((resolve, reject) => {
    execFile('python3', [join(here, '../fixtures/docker-py-binds-groups.py'), image, `dg${process.pid % 100000}bg`, ...sections], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}` }, timeout: 170_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker-py probe failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as Probe);
    });
  });
}

// dockerd's default bridge: this machine's dockerd runs with --bridge=none, where the links
// half runs against the sandbox alone, held to dockerd's formats (moby daemon/links/links.go).
const dockerdBridge: PeerCheck = { name: 'dockerd with its default bridge network (not --bridge=none)', available: () => spawnSync('docker', ['-H', 'unix:///var/run/docker.sock', 'network', 'inspect', 'bridge']).status === 0 };

const engines: [string, PeerCheck[], () => Promise<{ out: Probe; close?: () => Promise<void> }>][] = [
  ['dockerd (the reference)', [dockerPy, dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ out: await probe('/var/run/docker.sock', DOCKERD_IMAGE) })],
  ['the sandbox runtime', [dockerPy, bwrap], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    return { out: await probe(listening.socket, 'busybox'), close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

for (const [label, peers, open] of engines) {
  describeWithPeers(`docker-py 7 against ${label}: a host folder of host root's, bound in, is written by container root as on dockerd`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('-v (Binds): root touches /mnt/shared.txt, the file is host root\'s on the host, and a second container lists it as root\'s', () => {
      expect(out.binds).toMatchObject({ binds_touch: [0, ''], binds_host_file: ['shared.txt'], binds_host_owner: 0 });
      expect(out.binds!.binds_ls).toEqual([0, expect.stringMatching(/^total 0\n-rw-r--r-- +1 0 +0 +0 .* shared\.txt$/)]);
    });
    test('docker exec as root and docker cp write in the bind too, as host root', () => {
      expect(out.binds).toMatchObject({ exec_touch: 0, cp_put: true, exec_cp_host_owners: { 'by-cp': 0, 'by-exec': 0 } });
    });
    test(label === 'the sandbox runtime'
      ? 'a container of an owner (a tenant\'s, dockgate.owner) gets no idmapped bind: its root is an unprivileged host uid in the folder'
      : 'dockerd knows no owner label: the container\'s root writes the folder', () => {
      expect(out.binds!.owner_touch).toEqual(label === 'the sandbox runtime' ? ['exit', 1, 'touch: /mnt/shared.txt: Permission denied'] : [0, '']);
    });
    test('a read-only bind stays read-only for root', () => {
      expect(out.binds).toMatchObject({ binds_ro_touch: ['exit', 1] });
    });
    test('--mount type=bind (HostConfig.Mounts) and containers.run(volumes=[...]) are written the same way', () => {
      expect(out.binds).toMatchObject({ mounts_touch: [0, ''], mounts_host_file: ['shared.txt'], volumes_list_write: [0, ''], volumes_list_host_reads: 'hello\n' });
    });
    test('user=1000 as an int runs as uid 1000, which reads host root\'s file as uid 0\'s and may not write in host root\'s folder', () => {
      expect(out.binds).toMatchObject({ user_int_id: [0, '1000'], user_int_reads_bind: [0, 'hi'], user_int_owner_seen: [0, '0'], user_int_touch_refused: ['exit', 1] });
    });
  });

  describeWithPeers(`docker-py 7 against ${label}: GroupAdd gives supplementary groups, names from the container's /etc/group and numbers as they are`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('`id` in the container shows the groups added, for root and for another user; none added, the own gid only; inspect shows GroupAdd as asked; a name /etc/group lacks is refused in dockerd\'s words', () => {
      expect(out.group_add).toMatchObject({
        root_named_and_numbered: 'uid=0(root) gid=0(root) groups=0(root),50(staff),4321',
        user_numbered: 'uid=1000(u1000) gid=1000(u1000) groups=1000(u1000),4321',
        root_none: 'uid=0(root) gid=0(root) groups=0(root)',
        inspect: ['staff', '4321'],
        unknown_name: ['APIError', 'Unable to find group nosuchgroup: no matching entries in group file'],
      });
    });
    test('an exec in the container has them too (the kernel keeps them sorted)', () => {
      expect(out.group_add).toMatchObject({
        exec_root: 'uid=0(root) gid=0(root) groups=0(root),50(staff),4321',
        exec_user: 'uid=1000(u1000) gid=1000(u1000) groups=50(staff),1000(u1000),4321',
      });
    });
  });
}

// The dockerd half only where its dockerd has the default bridge (not a missing peer where it has none).
type Engine = [string, PeerCheck[], () => Promise<{ out: Probe; close?: () => Promise<void> }>];
const dockerdLinks: Engine = ['dockerd (the reference)', [dockerPy, dockerd(), dockerImage(DOCKERD_IMAGE)], async () => ({ out: await probe('/var/run/docker.sock', DOCKERD_IMAGE, ['bridge_links']) })];
const linkEngines: Engine[] = [
  ...(dockerdBridge.available() ? [dockerdLinks] : []),
  ['the sandbox runtime', [dockerPy, bwrap], async () => {
    const runtime: ContainerRuntime = sandboxRuntime();
    const listening = await listenOnSocket(runtime, '1.12-1.41');
    return { out: await probe(listening.socket, 'busybox', ['bridge_links']), close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
];

for (const [label, peers, open] of linkEngines) {
  describeWithPeers(`docker-py 7 against ${label}: legacy links on the default bridge are /etc/hosts lines and link variables`, peers, () => {
    let out: Probe;
    let close: (() => Promise<void>) | undefined;
    beforeAll(async () => ({ out, close } = await open()));
    afterAll(async () => close?.());

    test('the alias, the linked container\'s hostname and its name are one /etc/hosts line, and the alias reaches it', () => {
      expect(out.bridge_links).toMatchObject({ hosts: [0, '1\ndb-alias <short> <prefix>lt'], reaches: [0, 'hi'] });
    });
    test('<ALIAS>_PORT (the lowest port), each port\'s _PORT_<n>_<PROTO> set, <ALIAS>_NAME and <ALIAS>_ENV_* (not PATH) are in the environment', () => {
      expect(out.bridge_links!.env).toEqual([0, [
        'DB_ALIAS_ENV_FOO=bar', 'DB_ALIAS_NAME=/<linker>/db-alias', 'DB_ALIAS_PORT=udp://<ip>:53',
        'DB_ALIAS_PORT_53_UDP=udp://<ip>:53', 'DB_ALIAS_PORT_53_UDP_ADDR=<ip>', 'DB_ALIAS_PORT_53_UDP_PORT=53', 'DB_ALIAS_PORT_53_UDP_PROTO=udp',
        'DB_ALIAS_PORT_80_TCP=tcp://<ip>:80', 'DB_ALIAS_PORT_80_TCP_ADDR=<ip>', 'DB_ALIAS_PORT_80_TCP_PORT=80', 'DB_ALIAS_PORT_80_TCP_PROTO=tcp',
      ].join('\n')]);
    });
    test('a link to a container that is not running refuses the start in dockerd\'s words', () => {
      expect(out.bridge_links!.target_not_running).toEqual(['APIError', expect.stringMatching(/^Cannot link to a non running container: \/<prefix>lt AS \/[^/]+\/db-alias$/)]);
    });
  });
}
