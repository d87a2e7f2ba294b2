import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { spawnPty } from '../local/node-pty.js';
import type { LocalProcess } from '../local/local-container.js';
import { descendants } from '../local/proc-stats.js';
import { pipedProcess } from '../local/piped-process.js';
import { ptyProcess } from '../local/pty-process.js';
import { OPEN_SECCOMP } from './seccomp/seccomp-fd.js';
import { discardEnvArgs, ENV_ARGS_FD, OPEN_ENV_ARGS, removeOnceOpened, writeEnvArgs } from './env-args.js';
import { LAUNCHER_ENV } from '../../linux/launcher-env.js';
import { launchOffLoop } from '../../linux/off-loop-command.js';
import type { NetworkUserns } from './network/network-userns.js';
import { inTmpfsNamespace, type TmpfsNamespace } from './rootless-tmpfs.js';

/** One bwrap invocation: its arguments, the command, and how its output leaves. */
export interface SandboxLaunch {
  bwrap: string;
  args: string[];
  argv: string[];
  /** The container's environment: given to the command by bwrap (`--setenv`), never to a launcher. */
  env: string[];
  openStdin: boolean;
  /** Pid 1 of the container is bwrap's init (HostConfig.Init): signals go to the command below it. */
  init: boolean;
  /** Run on a pseudo-terminal of this size (rows, cols); undefined: pipes. */
  tty?: { rows: number; cols: number };
  output: (stream: 1 | 2, data: Buffer) => void;
  /** `cgroup.procs` files bwrap joins before it starts (resource limits); none: the server's own groups. */
  cgroupProcs?: string[];
  /** The compiled seccomp filter the launcher opens for bwrap's `--seccomp` (in `args`); none: unconfined. */
  seccompFile?: string;
  /** Runs `bwrap args -- argv` in the runtime's user namespace (userns/enter.ts); none: as the server's user. */
  enter?: (bwrap: string, args: string[], argv: string[]) => [string, string[]];
  /**
   * Descriptors the launcher opens for bwrap before it starts (the network's launch gate, whose
   * `args` already name them): a shell script and its arguments. None: bwrap starts directly.
   */
  descriptors?: { script: string; args: string[] };
  /**
   * Another container's network namespace (`/proc/PID/ns/net`, NetworkMode `container:ID`) that
   * the launch enters with nsenter before anything else; none: the server's (bwrap unshares its own).
   */
  netns?: string;
  /** util-linux's nsenter, for {@link netns}. */
  nsenter?: string;
  /** A rootless server's own user namespace (network/network-userns.ts), entered first (with {@link netns}, if any); none: the server's. */
  userns?: NetworkUserns;
  /** With {@link userns} and {@link netns}: the joined container's user namespace, entered instead (bwrap makes none of its own, bwrap-args.ts). */
  joinedUserns?: string;
  /**
   * With {@link enter} and {@link netns}, rootless: the network namespace is joined by {@link enter}'s
   * own nsenter, after its user namespace (which owns it): a process of the server's user outside
   * that namespace has no capability to join it.
   */
  netnsAfterUserns?: boolean;
  /** Rootless with Tmpfs mounts: the mount namespace holding them, entered before bwrap (rootless-tmpfs.ts). */
  tmpfsNs?: TmpfsNamespace;
}

/**
 * Joins the container's cgroups, then becomes bwrap: the shell writes its own pid into each
 * `cgroup.procs` and execs, so bwrap and everything it starts are limited from their first
 * instruction (writing the pid after spawn would let the command run unlimited for a moment).
 * The files come as arguments, not environment variables, which would reach the container.
 * 125 is dockerd's exit code for a container that could not be started.
 */
export const JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done';

/**
 * The shell of these small launchers. It runs as host root with {@link LAUNCHER_ENV} only (no
 * container data in its environment: see linux/launcher-env.ts), then execs the program.
 */
const SHELL = '/bin/sh';

/**
 * No rc file ever runs in a launcher: /bin/sh (dash on Debian) reads none when it is not
 * interactive and `ENV` is not in {@link LAUNCHER_ENV}. bash would run the server user's
 * ~/.bashrc when its stdin is a socket (its remote-shell rule), and node gives a child's stdin as
 * a socket pair (a .bashrc running `pyenv rehash` hung exec -i and cp): should the shell ever be
 * bash, `--norc` keeps it from that.
 */
const NO_RC = SHELL.endsWith('bash') ? ['--norc'] : [];

/** `script` in the launcher shell, then `args` (the program and its arguments after the script's own) exec'd. */
export function viaShell(script: string, args: string[]): [string, string[]] {
  return [SHELL, [...NO_RC, '-c', `${script}; exec "$@"`, 'sh', ...args]];
}

/** `bwrap`'s own arguments reading the container's environment from the launcher's descriptor (env-args.ts), then `args`. */
export function withEnvArgs(args: readonly string[]): string[] {
  return ['--args', String(ENV_ARGS_FD), ...args];
}

/**
 * The program and arguments that start bwrap: a launcher shell opens the file holding the
 * container's environment for bwrap's `--args` (env-args.ts) and the seccomp filter for its
 * `--seccomp`, joins the cgroups, then execs bwrap (through the user namespace's launcher when
 * there is one, userns/enter.ts), which gives the command that environment and nothing of the
 * launcher's. Every host program on the way (shell, unshare, nsenter, setpriv, bwrap) runs with
 * {@link LAUNCHER_ENV} only.
 */
function command(launch: SandboxLaunch, envFile: string | undefined): [string, string[]] {
  const procs = launch.cgroupProcs ?? [];
  const args = withEnvArgs(launch.args);
  let [inner, innerArgs] = launch.enter ? launch.enter(launch.bwrap, args, launch.argv) : [launch.bwrap, [...args, '--', ...launch.argv]];
  // `--network container:ID`: only the network namespace is entered, as host root, before the user namespace (if any) is made.
  let joinNet = launch.netns ? [`--net=${launch.netns}`] : [];
  if (launch.netnsAfterUserns && joinNet.length > 0) {
    // The launcher starts with `nsenter --user=…` (userns/): the network namespace joins that call.
    if (!innerArgs[0]?.startsWith('--user=')) throw new Error('the user namespace launcher does not start with nsenter --user (sandbox-process.ts)');
    innerArgs = [innerArgs[0], ...joinNet, ...innerArgs.slice(1)];
    joinNet = [];
  }
  let [program, programArgs] = launch.userns
    ? launch.userns.wrap(inner, innerArgs, joinNet, launch.joinedUserns)
    : joinNet.length > 0 ? [launch.nsenter ?? 'nsenter', [...joinNet, '--', inner, ...innerArgs]] : [inner, innerArgs];
  if (launch.tmpfsNs) [program, programArgs] = inTmpfsNamespace(launch.tmpfsNs, launch.nsenter ?? 'nsenter', program, programArgs);
  const seccomp = launch.seccompFile === undefined ? [] : [launch.seccompFile];
  // The network's launch gate (its FIFOs as fds 3 and 4, network/launch-gate.ts) opens first.
  const gate = launch.descriptors;
  // Without a file, the environment is already on ENV_ARGS_FD (opened by the command helper).
  const openEnv = envFile === undefined ? [] : [OPEN_ENV_ARGS];
  const script = [...(gate ? [gate.script] : []), ...openEnv, ...(seccomp.length > 0 ? [OPEN_SECCOMP] : []), JOIN_CGROUPS].join('; ');
  return viaShell(script, [...(gate?.args ?? []), ...(envFile === undefined ? [] : [envFile]), ...seccomp, String(procs.length), ...procs, program, ...programArgs]);
}

/** Starts bwrap on pipes or on a pty; resolves once it runs, rejects when it cannot start. */
export function launchSandbox(launch: SandboxLaunch): Promise<LocalProcess> {
  return launch.tty ? launchOnPty(launch, launch.tty) : launchOnPipes(launch);
}

async function launchOnPipes(launch: SandboxLaunch): Promise<LocalProcess> {
  const envFile = await writeEnvArgs(launch.env);
  const [program, args] = command(launch, undefined);
  // Spawned by a helper process, not from the event loop (off-loop-command.ts): the pipes are the
  // server's. The helper opens the environment file as the launcher's ENV_ARGS_FD and unlinks it
  // (before, the server polled /proc every 5 ms for the launcher's own open: a tenth of its CPU
  // in a burst of 16 starts).
  const child = launchOffLoop(program, args, { env: { ...LAUNCHER_ENV }, stdin: launch.openStdin, argsFile: { fd: ENV_ARGS_FD, path: envFile } });
  child.once('error', () => discardEnvArgs(envFile));
  return pipedProcess(child, launch.output, (pid) => ({
    kill: (sig) => signalContainer(pid, launch.init, sig, () => child.kill(sig)),
    pids: () => containerPids(pid),
  }));
}

/**
 * On a pseudo-terminal (node-pty): the sandbox's stdin, stdout and stderr are the pty's slave, so
 * `test -t 1` is true inside and the output is one raw stream, as dockerd gives a Tty container.
 * Back-pressure: pause() stops reading the master, and the container blocks once the pty's
 * buffer is full.
 */
async function launchOnPty(launch: SandboxLaunch, size: { rows: number; cols: number }): Promise<LocalProcess> {
  let pty;
  const envFile = await writeEnvArgs(launch.env);
  try {
    const [program, args] = command(launch, envFile);
    pty = spawnPty(program, args, {
      name: 'xterm',
      rows: size.rows,
      cols: size.cols,
      cwd: '/',
      env: { ...LAUNCHER_ENV },
      encoding: null,
    });
  } catch (error) {
    discardEnvArgs(envFile);
    throw error;
  }
  const term = pty;
  void removeOnceOpened(envFile, term.pid);
  return ptyProcess(term, launch.output, {
    kill: (sig) => signalContainer(term.pid, launch.init, sig, () => term.kill(sig)),
    pids: () => containerPids(term.pid),
  }, launch.openStdin);
}

/**
 * Delivers a signal the way dockerd does to the container's process: to pid 1 of its PID
 * namespace (the command, or under Init the command below bwrap's init), found as bwrap's child
 * (and grandchild) in /proc. Pid 1 ignores signals it has no handler for, as in any container.
 * SIGKILL also takes bwrap itself: --die-with-parent then kills pid 1, and with it every
 * process of the namespace.
 */
function signalContainer(bwrapPid: number, init: boolean, signal: NodeJS.Signals, killBwrap: () => void): void {
  const pid1 = childOf(bwrapPid);
  const target = pid1 !== undefined && init ? childOf(pid1) ?? pid1 : pid1;
  if (signal === 'SIGKILL') {
    if (pid1 !== undefined) tryKill(pid1, signal);
    killBwrap();
    return;
  }
  if (target === undefined) killBwrap();
  else tryKill(target, signal);
}

/**
 * The container's processes (for top, stats and pause): everything under bwrap (pid 1 of its
 * namespace and below), and every other process in its PID namespace, which is what `docker
 * exec` adds there (sandbox-exec.ts): dockerd lists, counts and freezes exec'd processes too.
 */
function containerPids(bwrapPid: number): number[] {
  const tree = descendants(bwrapPid);
  const ns = tree[0] === undefined ? '' : pidNamespace(tree[0]);
  if (ns === '') return tree;
  const known = new Set(tree);
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (/^\d+$/.test(name) && !known.has(pid) && pidNamespace(pid) === ns) tree.push(pid);
  }
  return tree;
}

function pidNamespace(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return '';
  }
}

function childOf(pid: number): number | undefined {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

function tryKill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: its exit is on its way.
  }
}

