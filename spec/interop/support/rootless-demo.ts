/**
 * The demo (demo/dist/main.js, which embeds sandboxRuntime) started as an ordinary user
 * (`DOCKGATE_ROOTLESS_USER`, default dgrootless, which .ci/run creates with a subordinate range)
 * through setpriv, which execs it with that user's ids and no root parent, and a Docker CLI 28
 * driving it over its socket. For the rootless specs (spec/interop/engine-rootless/).
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { program, type PeerCheck } from '../../support/peers.js';

export const DOCKER_CLI = '/usr/local/bin/docker';
export const DEMO_MAIN = join(process.cwd(), 'demo/dist/main.js');
export const ROOTLESS_USER = process.env.DOCKGATE_ROOTLESS_USER ?? 'dgrootless';

export interface UserIds { uid: number; gid: number; home: string }

export function idsOf(name: string): UserIds | undefined {
  const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  const [, , uid, gid, , home] = r.stdout.trim().split(':');
  return r.status === 0 && uid && gid ? { uid: Number(uid), gid: Number(gid), home: home ?? '/' } : undefined;
}

/** What a rootless spec needs, each named when missing. */
export function rootlessPeers(ids: UserIds | undefined, user = ROOTLESS_USER): PeerCheck[] {
  return [
    program(DOCKER_CLI), program('setpriv', ['--version']), program('slirp4netns'),
    { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(DEMO_MAIN) },
    { name: 'this run as root (to start the engine as another user)', available: () => process.geteuid?.() === 0 },
    { name: `an ordinary user ${user} (DOCKGATE_ROOTLESS_USER; .ci/run creates dgrootless)`, available: () => ids !== undefined && ids.uid !== 0 },
    { name: `demo/dist/main.js readable by ${user} (a checkout it can traverse)`, available: () => ids !== undefined && spawnSync('setpriv', [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--clear-groups', '--', 'test', '-r', DEMO_MAIN]).status === 0 },
    { name: '/dev/net/tun usable by an ordinary user (mode 0666, slirp4netns opens it)', available: () => (statSync('/dev/net/tun', { throwIfNoEntry: false })?.mode ?? 0) % 0o1000 === 0o666 },
  ];
}

export interface RootlessDemo {
  child: ChildProcess;
  /** Its directory (state, data, socket), owned by the user. */
  dir: string;
  socket: string;
  output: () => string;
  /** The Docker CLI against it: exit code and output. */
  docker: (args: string[], timeout?: number) => Promise<{ code: number; stdout: string; stderr: string }>;
  /** Stops it (SIGTERM, waited for) and removes its directory. */
  stop: () => Promise<void>;
}

/** The demo process as `as`'s user (setpriv, no root parent), its state and socket in `dir`, once its socket answers. */
export async function spawnDemoAs(dir: string, as: UserIds, extra: readonly string[] = []): Promise<{ child: ChildProcess; socket: string; output: () => string }> {
  const socket = join(dir, 'engine.sock');
  const child = spawn('setpriv', [`--reuid=${as.uid}`, `--regid=${as.gid}`, '--init-groups', '--', process.execPath, DEMO_MAIN,
    '--port', '0', '--engine-socket', socket, '--state-dir', join(dir, 'state'), '--log-level', 'warn', ...extra], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: as.home, XDG_DATA_HOME: join(dir, 'data') },
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
export function descendants(pid: number): number[] {
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

/** Starts the demo as `ids`' user: its state and socket in a directory of its own, owned by it. */
export async function startRootlessDemo(ids: UserIds): Promise<RootlessDemo> {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-rootless-'));
  const configDir = mkdtempSync(join(tmpdir(), 'dockgate-rootless-cli-'));
  mkdirSync(join(dir, 'data'));
  chownSync(dir, ids.uid, ids.gid);
  chownSync(join(dir, 'data'), ids.uid, ids.gid);
  const { child, socket, output } = await spawnDemoAs(dir, ids);
  const docker = (args: string[], timeout = 20_000): Promise<{ code: number; stdout: string; stderr: string }> => new Promise((resolve) => {
    execFile(DOCKER_CLI, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: configDir, DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir }, timeout }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
  };
  return { child, dir, socket, output, docker, stop };
}
