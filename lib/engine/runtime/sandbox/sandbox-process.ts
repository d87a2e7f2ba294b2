import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { spawnPty } from '../local/node-pty.js';
import type { LocalProcess } from '../local/local-container.js';
import { descendants } from '../local/proc-stats.js';
import { pipedProcess } from '../local/piped-process.js';
import { ptyProcess } from '../local/pty-process.js';
import { envRecord } from '../local/env-record.js';
import { OPEN_SECCOMP } from './seccomp/seccomp-fd.js';

/** One bwrap invocation: its arguments, the command, and how its output leaves. */
export interface SandboxLaunch {
  bwrap: string;
  args: string[];
  argv: string[];
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
}

/**
 * Joins the container's cgroups, then becomes bwrap: the shell writes its own pid into each
 * `cgroup.procs` and execs, so bwrap and everything it starts are limited from their first
 * instruction (writing the pid after spawn would let the command run unlimited for a moment).
 * The files come as arguments, not environment variables, which would reach the container.
 * 125 is dockerd's exit code for a container that could not be started.
 */
const JOIN_CGROUPS = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done';

/**
 * The shell of these small launchers. bash passes on environment entries whose names are not
 * shell identifiers (`spring.profiles.active=dev`, which Docker allows), where dash and busybox sh
 * drop them; `env -u` then takes out the variables the shell adds itself. /bin/sh without bash.
 */
const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
const EXEC_AS_GIVEN = 'exec /usr/bin/env -u PWD -u OLDPWD -u SHLVL "$@"';

/**
 * bash runs the server user's ~/.bashrc when its stdin is a socket (its remote-shell rule), and
 * node gives a child's stdin as a socket pair: `--norc` keeps the launcher from running it (it
 * hung an exec with stdin on a machine whose .bashrc runs `pyenv rehash`).
 */
const NO_RC = SHELL === '/bin/bash' ? ['--norc'] : [];

/** `script` in the launcher shell, then `args` (the program and its arguments after the script's own) exec'd with the environment as given. */
export function viaShell(script: string, args: string[]): [string, string[]] {
  return [SHELL, [...NO_RC, '-c', `${script}; ${EXEC_AS_GIVEN}`, 'sh', ...args]];
}

/** The program and arguments that start bwrap (through the cgroup joiner when there are groups, after the descriptors are open). */
function command(launch: SandboxLaunch): [string, string[]] {
  const bwrap: [string, string[]] = launch.enter ? launch.enter(launch.bwrap, launch.args, launch.argv) : [launch.bwrap, [...launch.args, '--', ...launch.argv]];
  const withFilter = launch.seccompFile === undefined ? bwrap : viaShell(OPEN_SECCOMP, [launch.seccompFile, bwrap[0], ...bwrap[1]]);
  const [program, args] = inCgroups(launch.cgroupProcs ?? [], withFilter[0], withFilter[1]);
  if (!launch.descriptors) return [program, args];
  return viaShell(launch.descriptors.script, [...launch.descriptors.args, program, ...args]);
}

/**
 * `program args` started inside the cgroups whose `cgroup.procs` files are given (none: as it
 * is). Used for the container's bwrap and for each `docker exec` in it, which dockerd also
 * puts in the container's groups so that its limits hold for exec'd processes too.
 */
export function inCgroups(procs: readonly string[], program: string, args: string[]): [string, string[]] {
  if (procs.length === 0) return [program, args];
  return viaShell(JOIN_CGROUPS, [String(procs.length), ...procs, program, ...args]);
}

/** Starts bwrap on pipes or on a pty; resolves once it runs, rejects when it cannot start. */
export function launchSandbox(launch: SandboxLaunch): Promise<LocalProcess> {
  return launch.tty ? launchOnPty(launch, launch.tty) : launchOnPipes(launch);
}

function launchOnPipes(launch: SandboxLaunch): Promise<LocalProcess> {
  const [program, args] = command(launch);
  const child = spawn(program, args, {
    env: envRecord(launch.env),
    stdio: [launch.openStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
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
function launchOnPty(launch: SandboxLaunch, size: { rows: number; cols: number }): Promise<LocalProcess> {
  let pty;
  try {
    const [program, args] = command(launch);
    pty = spawnPty(program, args, {
      name: 'xterm',
      rows: size.rows,
      cols: size.cols,
      cwd: '/',
      env: envRecord(launch.env),
      encoding: null,
    });
  } catch (error) {
    return Promise.reject(error as Error);
  }
  const term = pty;
  return Promise.resolve(ptyProcess(term, launch.output, {
    kill: (sig) => signalContainer(term.pid, launch.init, sig, () => term.kill(sig)),
    pids: () => containerPids(term.pid),
  }, launch.openStdin));
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

