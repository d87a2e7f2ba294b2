/**
 * The rootless pass: with `DOCKGATE_ENGINE_USER=NAME` (.ci/run's second pass sets it to
 * dgrootless), the specs that start their sandbox runtime through {@link sandboxServer} start it
 * as that ordinary user instead of in-process as root: the small host app
 * (fixtures/sandbox-host.mjs, on dist/) through setpriv, with that user's ids and no root parent.
 * The same specs then check the same rules against a rootless engine. Unset: in-process.
 */
import { describe, test } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxRuntime, type SandboxRuntimeOptions } from '../../../lib/engine/runtime/sandbox/index.js';
import type { VersionRangeInput } from '../../../lib/engine-api/version-range.js';
import { listenOnSocket } from '../../engine/helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

/** The user the rootless pass starts engines as; undefined: the ordinary (root, in-process) pass. */
export const ENGINE_USER = process.env.DOCKGATE_ENGINE_USER || undefined;

/**
 * describeWithPeers, or in the rootless pass a skipped block whose title says why: a block that
 * checks only dockerd (the reference), which the ordinary pass already did.
 */
export function describeReference(title: string, peers: PeerCheck[], body: () => void): void {
  if (ENGINE_USER) describe.skip(`${title} [the ordinary pass checks dockerd, the reference]`, body);
  else describeWithPeers(title, peers, body);
}

const HOST_APP = new URL('../fixtures/sandbox-host.mjs', import.meta.url).pathname;

/** `test`, or in the rootless pass a skipped test whose title says why it cannot hold there (never silently dropped). */
export function rootOnly(reason: string): (name: string, fn: () => Promise<unknown> | void, timeout?: number) => void {
  return ENGINE_USER
    ? (name) => test.skip(`${name} [root only: ${reason}]`, () => undefined)
    : (name, fn, timeout) => test(name, fn as () => Promise<unknown>, timeout);
}

/**
 * `test`, or in the rootless pass, when {@link ENGINE_USER} has no subordinate range (both
 * /etc/subuid and /etc/subgid), a skipped test whose title says why: with one, container users
 * other than root are mapped (userns/rootless-userns.ts) and the test runs.
 */
export function needsRange(reason: string): (name: string, fn: () => Promise<unknown> | void, timeout?: number) => void {
  const hasRange = (file: string): boolean => {
    try {
      return readFileSync(file, 'utf8').split('\n').some((l) => l.startsWith(`${ENGINE_USER}:`));
    } catch {
      return false;
    }
  };
  return ENGINE_USER && !(hasRange('/etc/subuid') && hasRange('/etc/subgid')) ? rootOnly(reason) : (name, fn, timeout) => test(name, fn as () => Promise<unknown>, timeout);
}

function idsOf(name: string): { uid: number; gid: number; home: string } {
  const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  const [, , uid, gid, , home] = r.stdout.trim().split(':');
  if (r.status !== 0 || !uid || !gid) throw new Error(`DOCKGATE_ENGINE_USER=${name}: no such user`);
  return { uid: Number(uid), gid: Number(gid), home: home ?? '/' };
}

/**
 * `program args` as {@link ENGINE_USER} in the rootless pass (setpriv with its ids, HOME its
 * own), and `paths` (a spec's state directory, its files) handed to it; as they are otherwise.
 */
export function asEngineUser(program: string, args: string[], paths: string[] = []): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  if (!ENGINE_USER) return { command: program, args, env: process.env };
  const ids = idsOf(ENGINE_USER);
  for (const path of paths) chownSync(path, ids.uid, ids.gid);
  return {
    command: 'setpriv',
    args: [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--init-groups', '--', program, ...args],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ids.home },
  };
}

/** A sandbox runtime listening on a socket: in-process, or in the rootless pass a process of {@link ENGINE_USER}. */
export interface SandboxServer {
  socket: string;
  /** The server's process in the rootless pass (the test's own process otherwise: none). */
  pid?: number;
  close(): Promise<void>;
}

/**
 * Starts a sandbox runtime with `options` behind a Unix socket. In the rootless pass the options
 * go to the host app as JSON (a function among them is refused), the state directory (made when
 * none is given) is handed to the user.
 */
export async function sandboxServer(options: SandboxRuntimeOptions = {}, range?: VersionRangeInput): Promise<SandboxServer> {
  if (!ENGINE_USER) {
    const runtime = sandboxRuntime(options);
    const listening = await listenOnSocket(runtime, range);
    return {
      socket: listening.socket,
      close: async () => {
        await listening.close();
        await runtime.close?.();
      },
    };
  }
  for (const [key, value] of Object.entries(options)) {
    if (typeof value === 'function') throw new Error(`the rootless pass passes options as JSON: ${key} is a function`);
  }
  const ids = idsOf(ENGINE_USER);
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-engine-user-'));
  chownSync(dir, ids.uid, ids.gid);
  const { stateDir: given, ...rest } = options;
  const stateDir = given ?? join(dir, 'state');
  if (given) chownSync(given, ids.uid, ids.gid);
  const socket = join(dir, 'engine.sock');
  const child: ChildProcess = spawn('setpriv', [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, '--init-groups', '--', process.execPath, HOST_APP, stateDir, socket, JSON.stringify(rest), ...(range === undefined ? [] : [JSON.stringify(range)])], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ids.home, XDG_DATA_HOME: join(dir, 'data') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the engine as ${ENGINE_USER} exited (${code}):\n${output}`)));
  });
  return {
    socket,
    ...(child.pid === undefined ? {} : { pid: child.pid }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 8000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
