/**
 * The sandbox runtime run rootless: the demo (demo/dist/main.js, which embeds sandboxRuntime)
 * started as an ordinary user (`DOCKGATE_ROOTLESS_USER`, default dgrootless, which .ci/run
 * creates with a subordinate range) through setpriv, which execs it with that user's ids and no
 * root parent, and driven by Docker CLI 28 over its socket. That user's subordinate range is mapped
 * (newuidmap); a second server run as `nobody`, which has none, shows the single-id mode's refusals.
 * Skipped, naming why, where the user,
 * the build or /dev/net/tun for an ordinary user is missing, or this run is not root (it must
 * start a process as another user).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { freePort } from '../support/free-port.js';
import { oneLayerArchive } from '../support/image-archive.js';
import { descendants, idsOf, spawnDemoAs } from '../support/rootless-demo.js';

const CLI = '/usr/local/bin/docker';
const MAIN = join(process.cwd(), 'demo/dist/main.js');
const USER = process.env.DOCKGATE_ROOTLESS_USER ?? 'dgrootless';

const ids = idsOf(USER);

/** The user's first subordinate id and count in `file` (/etc/subuid, /etc/subgid). */
function rangeOf(file: string, name: string): { start: number; count: number } | undefined {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const line = text.split('\n').map((l) => l.split(':')).find(([n]) => n === name);
  return line ? { start: Number(line[1]), count: Number(line[2]) } : undefined;
}
const subuid = rangeOf('/etc/subuid', USER);
const subgid = rangeOf('/etc/subgid', USER);
const nobody = idsOf('nobody');
const peers: PeerCheck[] = [
  program(CLI), program('setpriv', ['--version']), program('slirp4netns'),
  { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(MAIN) },
  { name: 'this run as root (to start the engine as another user)', available: () => process.geteuid?.() === 0 },
  { name: `an ordinary user ${USER} (DOCKGATE_ROOTLESS_USER; .ci/run creates dgrootless)`, available: () => ids !== undefined && ids.uid !== 0 },
  { name: `demo/dist/main.js readable by ${USER} (a checkout it can traverse)`, available: () => ids !== undefined && spawnSync('setpriv', [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--', 'test', '-r', MAIN]).status === 0 },
  { name: `a subordinate range for ${USER} in /etc/subuid and /etc/subgid`, available: () => subuid !== undefined && subgid !== undefined },
  ...['newuidmap', 'newgidmap'].map((tool) => ({ name: `/usr/bin/${tool} (Debian's uidmap)`, available: () => existsSync(`/usr/bin/${tool}`) })),
  { name: 'a user nobody without a subordinate range', available: () => nobody !== undefined && rangeOf('/etc/subuid', 'nobody') === undefined },
  { name: '/dev/net/tun usable by an ordinary user (mode 0666, slirp4netns opens it)', available: () => (statSync('/dev/net/tun', { throwIfNoEntry: false })?.mode ?? 0) % 0o1000 === 0o666 },
];

interface Rootless {
  child: ChildProcess;
  socket: string;
  output: () => string;
}

/** The demo as `USER` (or `as`): its state and socket in a directory of its own, owned by it. */
function startRootless(dir: string, as = ids!, extra: string[] = []): Promise<Rootless> {
  return spawnDemoAs(dir, as, extra);
}

function uidsOf(pid: number): number[] | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('Uid:'));
    return line?.split(/\s+/).slice(1, 5).map(Number);
  } catch {
    return undefined;
  }
}

describeWithPeers(`the sandbox runtime runs rootless: the demo as ${USER}, driven by Docker CLI 28`, peers, () => {
  let dir: string;
  let server: Rootless;
  const configDir = mkdtempSync(join(tmpdir(), 'dockgate-rootless-cli-'));
  const docker = (args: string[], timeout = 20_000, socket = server.socket): Promise<{ code: number; stdout: string; stderr: string }> => new Promise((resolve) => {
    execFile(CLI, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: configDir, DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir }, timeout }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dockgate-rootless-'));
    mkdirSync(join(dir, 'data'));
    chownSync(dir, ids!.uid, ids!.gid);
    chownSync(join(dir, 'data'), ids!.uid, ids!.gid);
    server = await startRootless(dir);
  });
  afterAll(async () => {
    if (server?.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await new Promise((r) => server.child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
  });

  describe('at start it says which limits it enforces and what to delegate for the others', () => {
    test('the notice names the user, the refused limits and the command that delegates their cgroups', () => {
      expect(server.output()).toContain(`sandbox runtime rootless as ${USER} (uid ${ids!.uid})`);
      expect(server.output()).toMatch(/refused by name: .*--memory/);
      expect(server.output()).toMatch(/chown -R /);
    });
  });

  describe('with a subordinate range, container ids are mapped through newuidmap: root onto the server\'s user, 1 to N onto the range', () => {
    test('docker run --rm busybox id prints root, and its uid_map and gid_map are the user\'s id then its subordinate range', async () => {
      const r = await docker(['run', '--rm', 'busybox', 'sh', '-c', 'id; cat /proc/self/uid_map /proc/self/gid_map']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const [id, ...maps] = r.stdout.trim().split('\n').map((l) => l.trim().split(/\s+/).join(' '));
      expect(id).toBe('uid=0(root) gid=0(root) groups=0(root)');
      expect(maps).toEqual([`0 ${ids!.uid} 1`, `1 ${subuid!.start} ${subuid!.count}`, `0 ${ids!.gid} 1`, `1 ${subgid!.start} ${subgid!.count}`]);
    });
    test('-u 1000 runs as uid 1000 (its volume\'s mount point made though root\'s tree is not its to change), and what it writes there belongs to host uid start + 999', async () => {
      expect(await docker(['run', '--rm', '-v', 'rootless-u:/data', 'busybox', 'chown', '1000:1000', '/data'])).toMatchObject({ code: 0 });
      const r = await docker(['run', '--rm', '-u', '1000:1000', '-v', 'rootless-u:/data', 'busybox', 'sh', '-c', 'id -u; id -g; echo x > /data/mine; stat -c %u:%g /data/mine']);
      expect(r).toMatchObject({ code: 0, stdout: '1000\n1000\n1000:1000\n' });
      const data = join(dir, 'state', 'engine', 'volumes', 'rootless-u', '_data', 'mine');
      expect(`${statSync(data).uid}:${statSync(data).gid}`).toBe(`${subuid!.start + 999}:${subgid!.start + 999}`);
      await docker(['volume', 'rm', 'rootless-u']);
    });
    test('docker logs shows a detached container\'s output; docker exec runs in it as root', async () => {
      const id = (await docker(['run', '-d', 'busybox', 'sh', '-c', 'echo one; echo two; sleep 30'])).stdout.trim();
      try {
        let logs = '';
        for (let i = 0; i < 50 && logs !== 'one\ntwo\n'; i++) {
          logs = (await docker(['logs', id])).stdout;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(logs).toBe('one\ntwo\n');
        expect(await docker(['exec', id, 'id', '-u'])).toMatchObject({ code: 0, stdout: '0\n' });
      } finally {
        await docker(['rm', '-f', id]);
      }
    });
    test('the default network is up (slirp4netns) and -p publishes a port above 1024', async () => {
      const port = await freePort();
      const id = (await docker(['run', '-d', '-p', `${port}:80`, 'busybox', 'sh', '-c', 'while true; do printf "HTTP/1.0 200 OK\\r\\n\\r\\nrootless\\n" | nc -l -p 80; done'])).stdout.trim();
      try {
        let body = '';
        for (let i = 0; i < 50 && body !== 'rootless\n'; i++) {
          // Each try bounded: a connection taken before nc listened may stay open, and a fetch on it wait for ever.
          body = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).then((res) => res.text(), () => '');
          if (body !== 'rootless\n') await new Promise((r) => setTimeout(r, 100));
        }
        expect(body).toBe('rootless\n');
      } finally {
        await docker(['rm', '-f', id]);
      }
    });
    test('-p 18080:80 publishes the container\'s port 80 on host port 18080, as the acceptance names it', async () => {
      const id = (await docker(['run', '-d', '-p', '18080:80', 'busybox', 'sh', '-c', 'while true; do printf "HTTP/1.0 200 OK\\r\\n\\r\\n18080\\n" | nc -l -p 80; done'])).stdout.trim();
      try {
        expect(id).toMatch(/^[0-9a-f]{64}$/);
        expect((await docker(['port', id, '80'])).stdout).toContain(':18080');
        let body = '';
        for (let i = 0; i < 50 && body !== '18080\n'; i++) {
          body = await fetch('http://127.0.0.1:18080/', { signal: AbortSignal.timeout(2000) }).then((res) => res.text(), () => '');
          if (body !== '18080\n') await new Promise((r) => setTimeout(r, 100));
        }
        expect(body).toBe('18080\n');
      } finally {
        await docker(['rm', '-f', id]);
      }
    });
    test('docker logs -f follows a running container\'s output as it comes, and ends when it exits', async () => {
      const id = (await docker(['run', '-d', 'busybox', 'sh', '-c', 'for i in 1 2 3; do echo line$i; sleep 0.3; done'])).stdout.trim();
      const followed = await docker(['logs', '-f', id], 20_000);
      expect(followed).toMatchObject({ code: 0, stdout: 'line1\nline2\nline3\n' });
      await docker(['rm', '-f', id]);
    });
    test('--network none leaves only lo', async () => {
      const r = await docker(['run', '--rm', '--network', 'none', 'busybox', 'sh', '-c', 'tail -n +3 /proc/net/dev | cut -d: -f1']);
      expect(r.stdout.trim()).toBe('lo');
    });
  });

  describe('images keep their files\' owners, unpacked into the mapped namespace; builds and volumes work with the mapping', () => {
    test('an image whose files belong to several users keeps them: as the container sees them, and on the host as the range\'s ids', async () => {
      const busybox = readFileSync('/bin/busybox');
      const archive = await oneLayerArchive('rootless-owners:1', [
        { header: { name: 'bin/', type: 'directory', mode: 0o755 } },
        { header: { name: 'bin/busybox', type: 'file', mode: 0o755, size: busybox.length }, body: busybox },
        ...['sh', 'cat', 'stat', 'id'].map((name) => ({ header: { name: `bin/${name}`, type: 'symlink' as const, linkname: 'busybox' } })),
        ...['proc/', 'dev/', 'sys/', 'etc/', 'home/'].map((name) => ({ header: { name, type: 'directory' as const, mode: 0o755 } })),
        { header: { name: 'tmp/', type: 'directory', mode: 0o1777 } },
        { header: { name: 'home/u/', type: 'directory', mode: 0o700, uid: 1000, gid: 1000 } },
        { header: { name: 'home/u/secret', type: 'file', mode: 0o600, uid: 1000, gid: 1000, size: 7 }, body: Buffer.from('hidden\n') },
        { header: { name: 'srv/', type: 'directory', mode: 0o755, uid: 33, gid: 33 } },
        { header: { name: 'srv/www', type: 'file', mode: 0o644, uid: 33, gid: 44, size: 4 }, body: Buffer.from('www\n') },
      ]);
      const file = join(dir, 'owners.tar');
      writeFileSync(file, archive);
      expect((await docker(['load', '-i', file])).code).toBe(0);
      const seen = await docker(['run', '--rm', 'rootless-owners:1', 'stat', '-c', '%n %u:%g', '/', '/home/u', '/home/u/secret', '/srv', '/srv/www']);
      expect(seen).toMatchObject({ code: 0, stdout: '/ 0:0\n/home/u 1000:1000\n/home/u/secret 1000:1000\n/srv 33:33\n/srv/www 33:44\n' });
      // The owner reads its 0600 file; root's files show as nobody in its single-id view.
      expect(await docker(['run', '--rm', '-u', '1000', 'rootless-owners:1', 'sh', '-c', 'cat /home/u/secret; stat -c %u /'])).toMatchObject({ code: 0, stdout: 'hidden\n65534\n' });
      // docker export reads the copy as the container's root in the namespace: the owners come out as the image has them.
      const created = (await docker(['create', 'rootless-owners:1'])).stdout.trim();
      const exported = spawnSync(CLI, ['export', created], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: configDir, DOCKER_HOST: `unix://${server.socket}`, DOCKER_CONFIG: configDir }, maxBuffer: 64 << 20 });
      const listed = spawnSync('tar', ['-tv', '--numeric-owner'], { input: exported.stdout, encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
      expect(listed).toMatch(/-rw------- 1000\/1000 +7 .* home\/u\/secret/);
      expect(listed).toMatch(/-rw-r--r-- 33\/44 +4 .* srv\/www/);
      await docker(['rm', created]);
      const trees = join(dir, 'state', 'engine', 'images', 'rootfs');
      const owned = readdirSync(trees).map((t) => join(trees, t, 'srv')).find((p) => existsSync(p))!;
      expect(statSync(owned).uid).toBe(subuid!.start + 32);
      expect((await docker(['rmi', 'rootless-owners:1'])).code).toBe(0);
    });
    test('docker build with a RUN step that gives files to other users makes an image with those owners', async () => {
      const ctx = mkdtempSync(join(tmpdir(), 'dockgate-rootless-build-'));
      writeFileSync(join(ctx, 'Dockerfile'), 'FROM busybox\nRUN echo built > /f && mkdir /data && echo d > /data/g && chown -R 1000:1000 /data\n');
      try {
        expect((await docker(['build', '-q', '-t', 'rootless-built', ctx], 60_000)).code).toBe(0);
        expect(await docker(['run', '--rm', 'rootless-built', 'sh', '-c', 'cat /f; stat -c %u:%g /f /data /data/g'])).toMatchObject({ code: 0, stdout: 'built\n0:0\n1000:1000\n1000:1000\n' });
        expect(await docker(['run', '--rm', '-u', '1000', 'rootless-built', 'sh', '-c', 'echo more >> /data/g && cat /data/g'])).toMatchObject({ code: 0, stdout: 'd\nmore\n' });
      } finally {
        rmSync(ctx, { recursive: true, force: true });
      }
    });
    test('a named volume is shared by two containers: one writes while the other runs, the other reads it', async () => {
      const writer = (await docker(['run', '-d', '-v', 'rootless-shared:/shared', 'busybox', 'sh', '-c', 'echo from-a > /shared/a; chown 1000 /shared/a; sleep 30'])).stdout.trim();
      try {
        let read = { code: 1, stdout: '', stderr: '' };
        for (let i = 0; i < 50 && read.stdout !== 'from-a\n1000\n'; i++) {
          read = await docker(['run', '--rm', '-v', 'rootless-shared:/shared', 'busybox', 'sh', '-c', 'cat /shared/a && stat -c %u /shared/a']);
        }
        expect(read).toMatchObject({ code: 0, stdout: 'from-a\n1000\n' });
      } finally {
        await docker(['rm', '-f', writer]);
        await docker(['volume', 'rm', 'rootless-shared']);
      }
    });
    test('docker exec into a container running as a non-root user runs as that user, in its namespaces, and sees its files and tmpfs; another user is refused by name', async () => {
      const id = (await docker(['run', '-d', '-u', '1000', '--tmpfs', '/scratch:mode=1777', 'busybox', 'sh', '-c', 'echo mine > /scratch/f; echo own > /tmp/own; sleep 30'])).stdout.trim();
      try {
        let r = { code: 1, stdout: '', stderr: '' };
        for (let i = 0; i < 50 && r.code !== 0; i++) {
          r = await docker(['exec', id, 'sh', '-c', 'id; cat /scratch/f /tmp/own; cat /proc/1/cmdline | tr "\\0" " "; echo; grep CapEff /proc/self/status']);
          if (r.code !== 0) await new Promise((res) => setTimeout(res, 100));
        }
        expect(r).toMatchObject({ code: 0, stdout: 'uid=1000(user) gid=1000(user) groups=1000(user)\nmine\nown\nsleep 30 \nCapEff:\t0000000000000000\n' });
        // What the exec writes belongs to the container's user (host uid start + 999), as the container's own writes.
        expect(await docker(['exec', id, 'sh', '-c', 'echo e > /tmp/by-exec && stat -c %u /tmp/by-exec'])).toMatchObject({ code: 0, stdout: '1000\n' });
        // Detached, so the CLI prints the daemon's message (attached it shows only the upgrade's 400).
        const root = await docker(['exec', '-d', '-u', '0', id, 'id']);
        expect(root.code).not.toBe(0);
        expect(root.stderr).toContain('the container runs in a user namespace that maps only uid 1000 and gid 1000');
      } finally {
        await docker(['rm', '-f', id]);
      }
    });
    test('docker exec -u 1000 into a root container runs as uid 1000 with no capability, and what it writes belongs to 1000', async () => {
      const id = (await docker(['run', '-d', '--tmpfs', '/scratch:mode=1777', 'busybox', 'sh', '-c', 'echo from-root > /scratch/f; sleep 30'])).stdout.trim();
      try {
        let r = { code: 1, stdout: '', stderr: '' };
        for (let i = 0; i < 50 && r.code !== 0; i++) {
          r = await docker(['exec', '-u', '1000', id, 'sh', '-c', 'id; cat /scratch/f; echo u > /scratch/by-u; stat -c %u /scratch/by-u; touch /etc/x 2>/dev/null || echo denied; grep CapEff /proc/self/status']);
          if (r.code !== 0) await new Promise((res) => setTimeout(res, 100));
        }
        expect(r).toMatchObject({ code: 0, stdout: 'uid=1000(user) gid=1000(user) groups=1000(user)\nfrom-root\n1000\ndenied\nCapEff:\t0000000000000000\n' });
        expect(await docker(['exec', id, 'stat', '-c', '%u', '/scratch/by-u'])).toMatchObject({ code: 0, stdout: '1000\n' });
      } finally {
        await docker(['rm', '-f', id]);
      }
    });
    test('a removed container\'s copy is gone from the state directory, files of the range\'s ids too', async () => {
      const id = (await docker(['create', '-u', '1000', 'busybox', 'sh', '-c', 'echo x > /tmp/by-1000'])).stdout.trim();
      expect((await docker(['start', '-a', id])).code).toBe(0);
      expect((await docker(['rm', id])).code).toBe(0);
      const left = join(dir, 'state', 'engine', 'containers', id);
      for (let i = 0; i < 50 && existsSync(left); i++) await new Promise((r) => setTimeout(r, 100));
      expect(existsSync(left)).toBe(false);
    });
  });

  describe('each owner runs on a range of its own, cut from the subordinate range (the tenant-isolation rule)', () => {
    test('with the whole range for containers without an owner, an owner\'s container is refused (409) naming what widens it', async () => {
      const r = await docker(['run', '--rm', '--label', 'dockgate.owner=alice', 'busybox', 'true']);
      expect(r.code).toBe(125);
      expect(r.stderr).toContain('no subordinate id range left for owner alice');
      expect(r.stderr).toMatch(/\/etc\/subuid.*userns\.size/);
    });
    test('--userns-size 4096: no owner, alice and bob get disjoint host ids for uid 1000, and each sees the image\'s owners as it says', async () => {
      const blocksDir = mkdtempSync(join(tmpdir(), 'dockgate-rootless-blocks-'));
      mkdirSync(join(blocksDir, 'data'));
      chownSync(blocksDir, ids!.uid, ids!.gid);
      chownSync(join(blocksDir, 'data'), ids!.uid, ids!.gid);
      const blocks = await startRootless(blocksDir, ids!, ['--userns-size', '4096']);
      try {
        expect(blocks.output()).toContain('container ids 0-4095 mapped');
        const hostUids: number[] = [];
        for (const [i, owner] of ['', 'alice', 'bob'].entries()) {
          const labels = owner === '' ? [] : ['--label', `dockgate.owner=${owner}`];
          const r = await docker(['run', '--rm', ...labels, '-u', '1000', '-v', `blocks${i}:/tmp`, 'busybox', 'sh', '-c', 'touch /tmp/f; stat -c %u:%g /tmp/f /home/user 2>/dev/null || stat -c %u:%g /tmp/f'], 20_000, blocks.socket);
          expect(r.code).toBe(0);
          expect(r.stdout.split('\n')[0]).toBe('1000:1000');
          hostUids.push(statSync(join(blocksDir, 'state', 'engine', 'volumes', `blocks${i}`, '_data', 'f')).uid);
        }
        expect(hostUids).toEqual([0, 1, 2].map((k) => subuid!.start + k * 4095 + 999));
        // An owner's copy has the image's owners moved into its block: docker diff shows only what the container changed.
        const changed = (await docker(['run', '-d', '--label', 'dockgate.owner=alice', 'busybox', 'touch', '/newfile'], 20_000, blocks.socket)).stdout.trim();
        await docker(['wait', changed], 20_000, blocks.socket);
        expect(await docker(['diff', changed], 20_000, blocks.socket)).toMatchObject({ code: 0, stdout: 'A /newfile\n' });
        const beyond = await docker(['run', '--rm', '-u', '5000', 'busybox', 'true'], 20_000, blocks.socket);
        expect(beyond.code).toBe(125);
        expect(beyond.stderr).toContain('User "5000": ids above 4095 are outside the container user namespace');
      } finally {
        blocks.child.kill('SIGTERM');
        await new Promise((r) => blocks.child.once('exit', r));
        rmSync(blocksDir, { recursive: true, force: true });
      }
    });
  });

  describe('what a rootless server cannot do is refused by name, never accepted and dropped', () => {
    test('--memory and --pids-limit without a delegated cgroup: a 400 naming the field, the group and the command', async () => {
      for (const [flag, field, controller] of [['--memory=64m', 'Memory', 'memory'], ['--pids-limit=10', 'PidsLimit', 'pids']] as const) {
        const r = await docker(['run', '--rm', flag, 'busybox', 'true']);
        expect(r.code).toBe(125);
        expect(r.stderr).toContain(`HostConfig.${field} is not supported`);
        expect(r.stderr).toMatch(new RegExp(`the ${controller} cgroup \\S+ is not delegated to it; delegate it once with: sudo sh -c`));
      }
    });
    test('-p 80:80: a host port below 1024 is refused, naming the binding', async () => {
      const r = await docker(['run', '--rm', '-p', '80:80', 'busybox', 'true']);
      expect(r.code).toBe(125);
      expect(r.stderr).toContain('HostConfig.PortBindings "80/tcp": host port 80 is below 1024');
    });
  });

  describe('without a subordinate range (the server run as nobody): one id, and what needs more is refused naming the /etc/subuid entry', () => {
    let single: Rootless;
    let singleDir: string;
    const dockerAt = (args: string[]) => docker(args, 20_000, single.socket);
    beforeAll(async () => {
      singleDir = mkdtempSync(join(tmpdir(), 'dockgate-rootless-single-'));
      mkdirSync(join(singleDir, 'data'));
      chownSync(singleDir, nobody!.uid, nobody!.gid);
      chownSync(join(singleDir, 'data'), nobody!.uid, nobody!.gid);
      single = await startRootless(singleDir, { ...nobody!, home: singleDir });
    });
    afterAll(async () => {
      if (single?.child.exitCode === null) {
        single.child.kill('SIGTERM');
        await new Promise((r) => single.child.once('exit', r));
      }
      rmSync(singleDir, { recursive: true, force: true });
    });
    test('the start notice says one id is mapped', () => {
      expect(single.output()).toContain('one container id mapped (root is nobody');
    });
    test('-u 1000 is refused naming the /etc/subuid entry to add', async () => {
      const r = await dockerAt(['run', '--rm', '-u', '1000', 'busybox', 'id']);
      expect(r.code).toBe(125);
      expect(r.stderr).toContain('User "1000": the server runs rootless (as nobody) with a single mapped id');
      expect(r.stderr).toContain('add "nobody:100000:65536" (an unused range) to /etc/subuid and /etc/subgid');
    });
    test('an image with a file owned by 1000:1000 is refused at load, naming the file (its owner is never dropped)', async () => {
      const archive = await oneLayerArchive('rootless-owned:1', [
        { header: { name: 'owned', type: 'file', mode: 0o644, uid: 1000, gid: 1000 }, body: Buffer.from('x') },
      ]);
      const file = join(singleDir, 'owned.tar');
      writeFileSync(file, archive);
      const r = await dockerAt(['load', '-i', file]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('the image\'s /owned is owned by 1000:1000: a rootless server maps one id');
    });
  });

  describe('a bind source is mounted as the object held at start, never a link swapped in on its path (the held-descriptor rule)', () => {
    test('a directory swapped for a link after create is refused at start; swapped back and forth during starts, the container never sees the link\'s target', async () => {
      const base = join(dir, 'swap');
      const secret = join(dir, 'swap-secret');
      mkdirSync(join(base, 'src'), { recursive: true });
      mkdirSync(secret, { recursive: true });
      writeFileSync(join(base, 'src', 'mine'), 'x');
      writeFileSync(join(secret, 'host-marker'), 'host only\n');
      spawnSync('chmod', ['-R', 'a+rX', base, secret]);
      const id = (await docker(['create', '-v', `${join(base, 'src')}:/x`, 'busybox', 'ls', '/x'])).stdout.trim();
      try {
        // Swapped once after create: the walk at start meets the link (a 400 naming the bind).
        spawnSync('sh', ['-c', `cd ${base} && mv src src.dir && ln -s ${secret} src`]);
        const swapped = await docker(['start', '-a', id]);
        expect(swapped.stdout).not.toContain('host-marker');
        expect(swapped.stderr).toMatch(/bind source .*src.* changed since the container was created: a symbolic link is now on its path/);
        // Back and forth while it starts: a start that holds the directory and then mounted the path would show the marker.
        spawnSync('sh', ['-c', `cd ${base} && rm src && mv src.dir src && ln -s ${secret} src.link`]);
        const swapper = spawn('sh', ['-c', `cd ${base} && while :; do mv src src.dir; mv src.link src; mv src src.link; mv src.dir src; done`], { stdio: 'ignore' });
        const outcomes = { shown: 0, refused: 0, marker: 0 };
        try {
          for (let i = 0; i < 80; i++) {
            const r = await docker(['start', '-a', id]);
            if (r.stdout.includes('host-marker')) outcomes.marker++;
            else if (r.stdout.includes('mine')) outcomes.shown++;
            else outcomes.refused++;
          }
        } finally {
          swapper.kill('SIGKILL');
        }
        expect(outcomes.marker).toBe(0);
        expect(outcomes.shown + outcomes.refused).toBe(80);
      } finally {
        await docker(['rm', '-f', id]);
      }
    }, 120_000);
  });

  describe('/info tells the truth', () => {
    test('SecurityOptions has name=rootless, and no limit is claimed', async () => {
      const r = await docker(['info', '-f', '{{json .SecurityOptions}} {{.MemoryLimit}} {{.PidsLimit}}']);
      expect(r.stdout.trim()).toBe('["name=rootless"] false false');
    });
  });

  describe('no process of the engine runs as root (the setuid newuidmap and newgidmap aside)', () => {
    test('while a root and a -u 1000 container and their networks run, every process below the server has the user\'s uids or the range\'s (real, effective, saved, fs)', async () => {
      const root = (await docker(['run', '-d', 'busybox', 'sleep', '30'])).stdout.trim();
      const user = (await docker(['run', '-d', '-u', '1000', 'busybox', 'sleep', '30'])).stdout.trim();
      try {
        await new Promise((r) => setTimeout(r, 300));
        const tree = [server.child.pid!, ...descendants(server.child.pid!)];
        expect(tree.length).toBeGreaterThanOrEqual(5);
        const seen = new Set<number>();
        for (const pid of tree) {
          const uids = uidsOf(pid);
          let exe = '';
          try {
            exe = readlinkSync(`/proc/${pid}/exe`);
          } catch {
            // gone, or not ours to read
          }
          if (!uids || /\/new[ug]idmap$/.test(exe)) continue;
          expect({ pid, root: uids.includes(0) }).toEqual({ pid, root: false });
          expect(new Set(uids).size).toBe(1);
          seen.add(uids[0]!);
        }
        expect([...seen].sort()).toEqual([ids!.uid, subuid!.start + 999].sort());
      } finally {
        await docker(['rm', '-f', root, user]);
      }
    });
  });

  describe('the demo\'s engine socket is in the user\'s runtime directory by default', () => {
    test('started without --engine-socket, it listens at $XDG_RUNTIME_DIR/dockgate-engine.sock', async () => {
      const runtimeDir = join(dir, 'xdg-run');
      mkdirSync(runtimeDir, { mode: 0o700 });
      chownSync(runtimeDir, ids!.uid, ids!.gid);
      const child = spawn('setpriv', [`--reuid=${ids!.uid}`, `--regid=${ids!.gid}`, '--init-groups', '--', process.execPath, MAIN,
        '--port', '0', '--state-dir', join(dir, 'state2'), '--log-level', 'silent'], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ids!.home, XDG_RUNTIME_DIR: runtimeDir, XDG_DATA_HOME: join(dir, 'data') },
        stdio: 'ignore',
      });
      try {
        const socket = join(runtimeDir, 'dockgate-engine.sock');
        for (let i = 0; i < 200 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 50));
        expect(statSync(socket).isSocket()).toBe(true);
        expect(statSync(socket).uid).toBe(ids!.uid);
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    });
  });

  describe('state lives where the user can write it', () => {
    test('the state directory is the user\'s and private (0700)', () => {
      const st = statSync(join(dir, 'state', 'engine'));
      expect(st.uid).toBe(ids!.uid);
      expect(st.mode % 0o1000).toBe(0o700);
      expect(() => accessSync(join(dir, 'state', 'engine'), constants.R_OK)).not.toThrow();
    });
  });
});
