import { readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalExecProcess, LocalExecRun } from '../local/local-container.js';
import { descendants } from '../local/proc-stats.js';
import { spawnExec } from '../local/spawn-exec.js';
import type { ResolvedUser } from './passwd.js';
import { bwrapExecArgs, hasUserNamespace, type BwrapPlan } from './bwrap-args.js';
import { inCgroups, viaShell } from './sandbox-process.js';
import { OPEN_SECCOMP } from './seccomp/seccomp-fd.js';

/** What an exec needs to know of the running container and the host tools. */
export interface SandboxExecContext {
  bwrap: string;
  nsenter: string;
  /** util-linux `setpriv`, which sets no_new_privs before nsenter (bwrap sets it on the container). */
  setpriv: string;
  /** The container's bwrap plan: its root filesystem copy, its user, its shared tmpfs directories. */
  plan: BwrapPlan;
  /** The container's `cgroup.procs` files (resource limits); none when it has no groups. */
  cgroupProcs: readonly string[];
  /** Resolves a `User` value against the container's /etc/passwd and /etc/group. */
  resolveUser(spec: string): ResolvedUser;
  /** Runs `bwrap args -- argv` as a user of the runtime's user namespace (userns/enter.ts); none: no such namespace. */
  enter?: (bwrap: string, args: string[], argv: string[], user: { uid: number; gid: number }) => [string, string[]];
}

/**
 * `docker exec` in a sandbox container, with what dockerd gives an exec: the container's
 * namespaces, root filesystem, binds and tmpfs, its capability set, its cgroups, the exec's
 * (else the container's) user with names from the container's /etc/passwd, its working
 * directory, the container's environment plus the exec's `Env` (and HOME). The command is a
 * process of the container's PID namespace (its /proc/1 is the container's pid 1) and dies
 * with it. Under the runtime's user namespace (the default for a root server, userns/) every
 * exec takes the first way below, entering that namespace as its user (`ctx.enter`), and gets
 * the container's seccomp filter. Without it, two ways in, by who runs:
 *
 * - uid 0 in a container without a user namespace: nsenter joins the container's network, IPC,
 *   UTS and cgroup namespaces, then bwrap joins its PID namespace and builds a mount namespace from the
 *   same host directories, dropping to the container's capabilities (`bwrapExecArgs`). nsenter
 *   alone would leave the host root's full capability set to the command.
 * - any other uid: nsenter joins every namespace of the container, its root and working
 *   directory, and sets the uid and gid; the kernel clears every capability at that setuid, and
 *   no_new_privs (set before, as bwrap sets it on the container) keeps setuid-root files and file
 *   capabilities from giving any back. In a container with a user namespace (a non-root `User`)
 *   bwrap maps that one uid and gid only, so an exec can run only as the container's user there.
 *   No seccomp filter is loaded on this way (nsenter cannot load one).
 *
 * Either way the command starts inside the container's cgroups (`inCgroups`), so its memory,
 * CPU and pids limits count the exec's processes too.
 */
export async function sandboxExec(run: LocalExecRun, ctx: SandboxExecContext): Promise<LocalExecProcess> {
  if (run.privileged) throw EngineError.invalidParameter('Privileged is not supported by the sandbox runtime');
  const spec = run.user !== '' ? run.user : typeof run.container.body.User === 'string' ? run.container.body.User : '';
  // Names resolve against the container's /etc/passwd and /etc/group, as runc does for dockerd's exec.
  const { uid, gid, home } = ctx.resolveUser(spec === '' ? '0' : spec);
  const owner = ctx.plan.user;
  if (!ctx.enter && hasUserNamespace(owner) && (uid !== owner.uid || gid !== owner.gid)) {
    throw EngineError.invalidParameter(`User "${spec}": the container runs in a user namespace that maps only uid ${owner.uid} and gid ${owner.gid} (its User); the sandbox runtime runs its execs as that user only`);
  }
  if (!ctx.enter && !hasUserNamespace(owner) && uid === 0 && gid !== 0) {
    throw EngineError.invalidParameter(`User "${spec}": the sandbox runtime runs an exec as uid 0 with gid 0 only`);
  }
  const env = run.env.some((e) => e.startsWith('HOME=')) ? run.env : [...run.env, `HOME=${home}`];
  const cwd = run.workingDir !== '' ? run.workingDir : (run.container.body.WorkingDir || '/');
  if (!cwd.startsWith('/')) throw EngineError.invalidParameter(`WorkingDir "${cwd}" must be an absolute path`);
  const init = await containerInit(run, ctx.bwrap);
  const [file, args] = inCgroups(ctx.cgroupProcs, ...(ctx.enter || (uid === 0 && !hasUserNamespace(owner))
    ? bwrapExec(run, ctx, init, cwd, { uid, gid })
    : userExec(run, ctx, init, cwd, uid, gid)));
  return spawnExec({
    file,
    args,
    cwd: '/',
    env,
    tty: run.tty,
    stdin: run.stdin,
    ...(run.consoleSize ? { consoleSize: run.consoleSize } : {}),
    output: run.output,
  });
}

/**
 * bwrap takes the PID namespace as an open descriptor: a shell opens the container's as fd 3
 * and execs nsenter with it (node-pty passes no extra descriptors, so spawn's stdio cannot).
 * 126 (dockerd's "cannot invoke") when pid 1 is gone meanwhile. bwrap leaves the descriptor
 * open, so the command has a fd 3 dockerd's exec would not have: the PID namespace it is already
 * in (owned by the user namespace it is already in), which gives it nothing new.
 */
const OPEN_PIDNS = 'exec 3<"$1" || exit 126; shift';

function bwrapExec(run: LocalExecRun, ctx: SandboxExecContext, init: number, cwd: string, user: { uid: number; gid: number }): [string, string[]] {
  const bwrapArgs = bwrapExecArgs(run.container.body, { ...ctx.plan, tty: run.tty }, 3, cwd);
  const seccomp = ctx.plan.seccompFile;
  // The container's seccomp filter too: the shell opens it for bwrap's --seccomp, as at start.
  const script = seccomp === undefined ? OPEN_PIDNS : `${OPEN_PIDNS}; ${OPEN_SECCOMP}`;
  const [program, args] = ctx.enter ? ctx.enter(ctx.bwrap, bwrapArgs, run.argv, user) : [ctx.bwrap, [...bwrapArgs, '--', ...run.argv]];
  return viaShell(script, [`/proc/${init}/ns/pid`, ...(seccomp === undefined ? [] : [seccomp]),
    ctx.nsenter, '--target', String(init), '--net', '--ipc', '--uts', '--cgroup', '--', program, ...args]);
}

function userExec(run: LocalExecRun, ctx: SandboxExecContext, init: number, cwd: string, uid: number, gid: number): [string, string[]] {
  return [ctx.setpriv, ['--no-new-privs', '--',
    ctx.nsenter, '--target', String(init), '--all', '--root', `--wdns=${cwd}`, `--setuid=${uid}`, `--setgid=${gid}`, '--', ...run.argv]];
}

/**
 * The host pid of pid 1 of the container's PID namespace (the command under `--as-pid-1`, or
 * bubblewrap's init with Init). It is joined only once bubblewrap has finished building the
 * container (pid 1 no longer runs bwrap's code, or, with Init, the command below it exists):
 * an exec right after `docker run -d` must not land in a half-made container.
 */
async function containerInit(run: LocalExecRun, bwrap: string): Promise<number> {
  const outer = run.container.process?.pid;
  for (let i = 0; outer && i < 200; i++) {
    // The launcher may still be setting up (cgroups, seccomp, the user namespace's staging binds,
    // whose mount and mkdir are its children too) before it becomes bwrap.
    const launched = basename(exe(outer)) === basename(bwrap);
    const tree = launched ? descendants(outer) : [];
    const pid1 = tree[0];
    if (pid1 !== undefined && (tree.length >= 2 || exe(pid1) !== exe(outer))) return pid1;
    await delay(10);
  }
  throw EngineError.conflict(`Container ${run.container.id} is not running`);
}

function exe(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}
