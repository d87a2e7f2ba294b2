/**
 * The sandbox runtime run rootless: the demo (demo/dist/main.js, which embeds sandboxRuntime)
 * started as an ordinary user (`DOCKGATE_ROOTLESS_USER`, default dgrootless, which .ci/run
 * creates with a subordinate range) through setpriv, which execs it with that user's ids and no
 * root parent, and driven by Docker CLI 28 over its socket. Skipped, naming why, where the user,
 * the build or /dev/net/tun for an ordinary user is missing, or this run is not root (it must
 * start a process as another user).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { freePort } from '../support/free-port.js';
import { oneLayerArchive } from '../support/image-archive.js';

const CLI = '/usr/local/bin/docker';
const MAIN = join(process.cwd(), 'demo/dist/main.js');
const USER = process.env.DOCKGATE_ROOTLESS_USER ?? 'dgrootless';

function idsOf(name: string): { uid: number; gid: number; home: string } | undefined {
  const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  const [, , uid, gid, , home] = r.stdout.trim().split(':');
  return r.status === 0 && uid && gid ? { uid: Number(uid), gid: Number(gid), home: home ?? '/' } : undefined;
}

const ids = idsOf(USER);
const peers: PeerCheck[] = [
  program(CLI), program('setpriv', ['--version']), program('slirp4netns'),
  { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(MAIN) },
  { name: 'this run as root (to start the engine as another user)', available: () => process.geteuid?.() === 0 },
  { name: `an ordinary user ${USER} (DOCKGATE_ROOTLESS_USER; .ci/run creates dgrootless)`, available: () => ids !== undefined && ids.uid !== 0 },
  { name: `demo/dist/main.js readable by ${USER} (a checkout it can traverse)`, available: () => ids !== undefined && spawnSync('setpriv', [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--', 'test', '-r', MAIN]).status === 0 },
  { name: '/dev/net/tun usable by an ordinary user (mode 0666, slirp4netns opens it)', available: () => (statSync('/dev/net/tun', { throwIfNoEntry: false })?.mode ?? 0) % 0o1000 === 0o666 },
];

interface Rootless {
  child: ChildProcess;
  socket: string;
  output: () => string;
}

/** The demo as `USER`: its state and socket in a directory of its own, owned by it. */
async function startRootless(dir: string): Promise<Rootless> {
  const socket = join(dir, 'engine.sock');
  const child = spawn('setpriv', [`--reuid=${ids!.uid}`, `--regid=${ids!.gid}`, '--init-groups', '--', process.execPath, MAIN,
    '--port', '0', '--engine-socket', socket, '--state-dir', join(dir, 'state'), '--log-level', 'warn'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ids!.home, XDG_DATA_HOME: join(dir, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (c: Buffer) => { text += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { text += c.toString(); });
  for (let i = 0; i < 300 && !existsSync(socket); i++) {
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!existsSync(socket)) throw new Error(`the rootless demo did not start:\n${text}`);
  return { child, socket, output: () => text };
}

/** Every process below `pid` (children, their children…), from /proc. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const [child, ppid] of parent) if (ppid === p) { out.push(child); walk(child); }
  };
  walk(pid);
  return out;
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
  const docker = (args: string[], timeout = 20_000): Promise<{ code: number; stdout: string; stderr: string }> => new Promise((resolve) => {
    execFile(CLI, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: configDir, DOCKER_HOST: `unix://${server.socket}`, DOCKER_CONFIG: configDir }, timeout }, (error, stdout, stderr) => {
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

  describe('containers run, with container root mapped onto the server\'s user', () => {
    test('docker run --rm busybox id prints root, and its uid_map maps 0 onto the server\'s uid alone', async () => {
      const r = await docker(['run', '--rm', 'busybox', 'sh', '-c', 'id; cat /proc/self/uid_map']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const [id, map] = r.stdout.split('\n');
      expect(id).toBe('uid=0(root) gid=0(root) groups=0(root)');
      // One id, container root: seen from inside, onto root of the engine's user namespace (network-userns.ts), itself the server's uid.
      expect(map!.trim().split(/\s+/)).toEqual(['0', '0', '1']);
      const detached = (await docker(['run', '-d', 'busybox', 'sleep', '30'])).stdout.trim();
      try {
        const isSleep = (p: number): boolean => {
          try {
            return /(^|\/)sleep\u000030\u0000$/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8'));
          } catch {
            return false;
          }
        };
        let pid: number | undefined;
        for (let i = 0; i < 50 && pid === undefined; i++) {
          pid = descendants(server.child.pid!).find(isSleep);
          if (pid === undefined) await new Promise((r) => setTimeout(r, 100));
        }
        // Seen from the host: container root is the server's uid alone.
        expect(readFileSync(`/proc/${pid!}/uid_map`, 'utf8').trim().split(/\s+/)).toEqual(['0', String(ids!.uid), '1']);
      } finally {
        await docker(['rm', '-f', detached]);
      }
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
          body = await fetch(`http://127.0.0.1:${port}/`).then((res) => res.text(), () => '');
          if (body !== 'rootless\n') await new Promise((r) => setTimeout(r, 100));
        }
        expect(body).toBe('rootless\n');
      } finally {
        await docker(['rm', '-f', id]);
      }
    });
    test('--network none leaves only lo', async () => {
      const r = await docker(['run', '--rm', '--network', 'none', 'busybox', 'sh', '-c', 'tail -n +3 /proc/net/dev | cut -d: -f1']);
      expect(r.stdout.trim()).toBe('lo');
    });
  });

  describe('images: built with RUN, and only root\'s files where one id is mapped', () => {
    test('docker build with a RUN step makes an image whose files are root\'s, as the container saw them', async () => {
      const ctx = mkdtempSync(join(tmpdir(), 'dockgate-rootless-build-'));
      writeFileSync(join(ctx, 'Dockerfile'), 'FROM busybox\nRUN echo built > /f\n');
      try {
        expect((await docker(['build', '-q', '-t', 'rootless-built', ctx], 60_000)).code).toBe(0);
        expect(await docker(['run', '--rm', 'rootless-built', 'sh', '-c', 'cat /f; stat -c %u:%g /f'])).toMatchObject({ code: 0, stdout: 'built\n0:0\n' });
      } finally {
        rmSync(ctx, { recursive: true, force: true });
      }
    });
    test('an image with a file owned by 1000:1000 is refused at load, naming the file (its owner is never dropped)', async () => {
      const archive = await oneLayerArchive('rootless-owned:1', [
        { header: { name: 'owned', type: 'file', mode: 0o644, uid: 1000, gid: 1000 }, body: Buffer.from('x') },
      ]);
      const file = join(dir, 'owned.tar');
      writeFileSync(file, archive);
      const r = await docker(['load', '-i', file]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('the image\'s /owned is owned by 1000:1000: a rootless server maps one id');
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
    test('-u 1000 needs more than one id: refused naming /etc/subuid', async () => {
      const r = await docker(['run', '--rm', '-u', '1000', 'busybox', 'id']);
      expect(r.code).toBe(125);
      expect(r.stderr).toContain('User "1000": the server runs rootless');
      expect(r.stderr).toContain('/etc/subuid');
    });
  });

  describe('/info tells the truth', () => {
    test('SecurityOptions has name=rootless, and no limit is claimed', async () => {
      const r = await docker(['info', '-f', '{{json .SecurityOptions}} {{.MemoryLimit}} {{.PidsLimit}}']);
      expect(r.stdout.trim()).toBe('["name=rootless"] false false');
    });
  });

  describe('no process of the engine runs as root', () => {
    test('while a container and its network run, every process below the server has no root uid (real, effective, saved, fs)', async () => {
      const id = (await docker(['run', '-d', 'busybox', 'sleep', '30'])).stdout.trim();
      try {
        await new Promise((r) => setTimeout(r, 300));
        const tree = [server.child.pid!, ...descendants(server.child.pid!)];
        expect(tree.length).toBeGreaterThanOrEqual(3);
        for (const pid of tree) {
          const uids = uidsOf(pid);
          if (uids) expect({ pid, uids }).toEqual({ pid, uids: [ids!.uid, ids!.uid, ids!.uid, ids!.uid] });
        }
      } finally {
        await docker(['rm', '-f', id]);
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
