import { readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalExecProcess, LocalExecRun } from '../local/local-container.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import { descendants } from '../local/proc-stats.js';
import { spawnExec } from '../local/spawn-exec.js';
import type { ResolvedUser } from './passwd.js';
import { bwrapExecArgs, hasUserNamespace, type BwrapPlan } from './bwrap-args.js';
import { JOIN_CGROUPS, viaShell, withEnvArgs } from './sandbox-process.js';
import { OPEN_SECCOMP } from './seccomp/seccomp-fd.js';
import { withExecFailure } from './exec-failure.js';
import { endsWithItsTree } from './exec-tree.js';
import { discardEnvArgs, OPEN_ENV_ARGS, removeOnceOpened, writeEnvArgs } from './env-args.js';
import { LAUNCHER_ENV } from '../../linux/launcher-env.js';
import type { MappedExec } from './userns/rootless-userns.js';
import { inOwnerUserns, inTmpfsNamespace, type TmpfsNamespace } from './rootless-tmpfs.js';

/** What an exec needs to know of the running container and the host tools. */
export interface SandboxExecContext {
  bwrap: string;
  nsenter: string;
  /** The host's static busybox, whose `nsenter` applet switches an exec to another user inside its sandbox; none: execs run as root only. */
  busybox?: string;
  /** The container's bwrap plan: its root filesystem copy, its user, its shared tmpfs directories. */
  plan: BwrapPlan;
  /** The spec the container was started with (its volumes as binds of their directories); none: the container's own. */
  spec?: ContainerSpec;
  /** The container's `cgroup.procs` files (resource limits); none when it has no groups. */
  cgroupProcs: readonly string[];
  /** Resolves a `User` value against the container's /etc/passwd and /etc/group. */
  resolveUser(spec: string): Promise<ResolvedUser>;
  /** Runs `bwrap args -- argv` as a user of the runtime's user namespace (userns/enter.ts); none: no such namespace. */
  enter?: (bwrap: string, args: string[], argv: string[], user: { uid: number; gid: number; groups?: readonly number[] | undefined }) => [string, string[]];
  /** Rootless with Tmpfs mounts: the mount namespace holding them (rootless-tmpfs.ts), entered before bwrap. */
  tmpfsNs?: TmpfsNamespace;
  /** Rootless with a mapped range: how an exec goes in (userns/exec-mapped.ts), a non-root user's into its nested user namespace, held binds staged. */
  mappedExec?: MappedExec;
}

/**
 * `docker exec` in a sandbox container, with what dockerd gives an exec: the container's
 * namespaces, root filesystem, binds and tmpfs, its capability set, its cgroups, the exec's
 * (else the container's) user with names from the container's /etc/passwd, its working
 * directory, the container's environment plus the exec's `Env` (and HOME). The command is a
 * process of the container's PID namespace (its /proc/1 is the container's pid 1) and dies
 * with it. Every way in starts with a launcher shell (with a fixed environment of its own,
 * LAUNCHER_ENV) that opens the exec's environment file for bwrap's `--args`, the container's
 * PID namespace and seccomp filter, and joins the container's cgroups; nsenter then joins its
 * network, IPC, UTS and cgroup namespaces, and bwrap joins its PID namespace, builds a mount
 * namespace from the same host directories (masked /proc paths and the /sys cgroup view
 * included), drops to the container's capabilities (`bwrapExecArgs`), loads the container's
 * seccomp filter and gives the command its environment (`--clearenv`, `--setenv`): no host
 * program ever sees the container's Env.
 *
 * - Under the runtime's user namespace (the default for a root server, userns/), the user is
 *   set by the namespace's launcher (`ctx.enter`): root enters as the namespace's uid 0, any
 *   other user through bwrap's own `--userns`/`--uid`/`--gid`. No busybox is needed there: the
 *   switch happens before bwrap mounts anything or runs anything of the container's, with the
 *   namespace's ids only, and the command runs under the filter like every other exec.
 * - Without it, bwrap cannot set another uid (it has no user namespace of its own to map one
 *   in): an exec as another uid (or in a container with a user namespace of its own, a non-root
 *   `User`) passes through busybox's nsenter inside the sandbox (`userSwitchArgs`), which sets
 *   the uid and gid; the kernel clears every capability at that setuid, and no_new_privs (set
 *   by bwrap) keeps setuid-root files and file capabilities from giving any back. In a container
 *   with a user namespace bwrap maps that one uid and gid only, so an exec can run only as the
 *   container's user there.
 *
 * The command starts inside the container's cgroups, so its memory,
 * CPU and pids limits count the exec's processes too.
 */
/**
 * The server is not root (rootless): the container's namespaces belong to its user namespace
 * (bwrap's), which nsenter joins first, keeping the server's ids (container root there).
 */
const ROOTLESS = (process.geteuid?.() ?? 0) !== 0;

export async function sandboxExec(run: LocalExecRun, ctx: SandboxExecContext): Promise<LocalExecProcess> {
  if (run.privileged) throw EngineError.invalidParameter('Privileged is not supported by the sandbox runtime');
  const spec = run.user !== '' ? run.user : run.container.spec.user;
  // Names resolve against the container's /etc/passwd and /etc/group, as runc does for dockerd's exec.
  // A numeric uid:gid with HOME given asks nothing of them (no supplementary groups are set), so
  // none is read: `docker cp` runs so, whatever the container made of its /etc/passwd.
  const wanted = spec === '' ? '0' : spec;
  const numeric = /^(\d{1,10}):(\d{1,10})$/.exec(wanted);
  const given = numeric && run.env.some((e) => e.startsWith('HOME=')) && Number(numeric[1]) <= 0xfffffffe && Number(numeric[2]) <= 0xfffffffe;
  const { uid, gid, home } = given ? { uid: Number(numeric[1]), gid: Number(numeric[2]), home: '' } : await ctx.resolveUser(wanted);
  const owner = ctx.plan.user;
  // Rootless with a mapped range, a root container's execs may run as any user of the range (userns/exec-mapped.ts).
  const anyUser = ctx.mappedExec !== undefined && owner.uid === 0;
  if (!ctx.enter && !anyUser && hasUserNamespace(owner) && (uid !== owner.uid || gid !== owner.gid)) {
    throw EngineError.invalidParameter(`User "${spec}": the container runs in a user namespace that maps only uid ${owner.uid} and gid ${owner.gid} (its User); the sandbox runtime runs its execs as that user only`);
  }
  // Rootless, the launcher's nsenter already joined the container's user namespace (root only, checked above).
  const ownUserns = hasUserNamespace(owner) && !ROOTLESS;
  if (!ctx.enter && !ownUserns && uid === 0 && gid !== 0) {
    throw EngineError.invalidParameter(`User "${spec}": the sandbox runtime runs an exec as uid 0 with gid 0 only`);
  }
  const env = run.env.some((e) => e.startsWith('HOME=')) ? run.env : [...run.env, `HOME=${home}`];
  const cwd = run.workingDir !== '' ? run.workingDir : (run.container.spec.workingDir || '/');
  if (!cwd.startsWith('/')) throw EngineError.invalidParameter(`WorkingDir "${cwd}" must be an absolute path`);
  const init = await containerInit(run, ctx.bwrap);
  // Rootless with a mapped range: as its start went in, then its namespaces joined (as its uid and gid only, checked above).
  const nested = ctx.mappedExec;
  const switchUser = !ctx.enter && !nested && (uid !== 0 || ownUserns);
  if (switchUser && ctx.busybox === undefined) {
    throw EngineError.invalidParameter(`User "${spec}": the sandbox runtime runs execs as a non-root user with a static busybox, and this server has none (sandboxRuntime option "busybox")`);
  }
  // Joining the container's own user namespace (setns) from under its filter needs CAP_SYS_ADMIN,
  // which Docker's profile (and the container's) does not grant: that one way keeps no filter, as
  // before (only without the runtime's user namespace, where the container is not in it either).
  const joinUserNamespace = switchUser && ownUserns;
  const seccomp = joinUserNamespace ? undefined : ctx.plan.seccompFile;
  const plan: BwrapPlan = { ...ctx.plan, tty: run.tty };
  if (seccomp === undefined) delete plan.seccompFile;
  const bwrapArgs = withEnvArgs([...bwrapExecArgs(ctx.spec ?? run.container.spec, plan, 3, cwd), ...(switchUser ? userSwitchArgs(ctx.busybox!, joinUserNamespace) : [])]);
  const argv = switchUser ? [EXEC_BUSYBOX, 'nsenter', ...(joinUserNamespace ? ['-U/proc/1/ns/user'] : []), '-S', String(uid), '-G', String(gid), '-F', '--', ...run.argv] : run.argv;
  const [program, programArgs] = ctx.enter ? ctx.enter(ctx.bwrap, bwrapArgs, argv, { uid, gid, groups: owner.groups }) : [ctx.bwrap, [...bwrapArgs, '--', ...argv]];
  const envFile = await writeEnvArgs(env);
  const script = [OPEN_ENV_ARGS, OPEN_PIDNS, ...(seccomp === undefined ? [] : [OPEN_SECCOMP]), JOIN_CGROUPS].join('; ');
  let joiner: [string, string[]] = nested ? nested(init, ctx.bwrap, bwrapArgs, run.argv, { uid, gid }) : [ctx.nsenter, ['--target', String(init), ...(ROOTLESS ? ['--user', '--preserve-credentials'] : []), '--net', '--ipc', '--uts', '--cgroup', '--', program, ...programArgs]];
  // Rootless with Tmpfs mounts: in the mount namespace that holds them, as the container was launched.
  if (ctx.tmpfsNs) joiner = inTmpfsNamespace(ctx.tmpfsNs, ctx.nsenter, ...joiner, await inOwnerUserns(ctx.tmpfsNs, init));
  const [file, args] = viaShell(script, [envFile, `/proc/${init}/ns/pid`, ...(seccomp === undefined ? [] : [seccomp]), String(ctx.cgroupProcs.length), ...ctx.cgroupProcs, ...joiner.flat()]);
  // A command that cannot be run is dockerd's 126 with runc's message, not bwrap's status 1 (exec-failure.ts).
  const failure = withExecFailure(run.output);
  return spawnExec({
    file,
    args,
    cwd: '/',
    env: Object.entries(LAUNCHER_ENV).map(([k, v]) => `${k}=${v}`),
    tty: run.tty,
    stdin: run.stdin,
    ...(run.consoleSize ? { consoleSize: run.consoleSize } : {}),
    output: failure.output,
  }).then((proc) => {
    void removeOnceOpened(envFile, proc.pid);
    return failure.exited(endsWithItsTree(proc));
  }, (error: unknown) => {
    discardEnvArgs(envFile);
    throw error;
  });
}

/**
 * bwrap takes the PID namespace as an open descriptor: the launcher shell opens the container's
 * as fd 3 before it execs nsenter (node-pty passes no extra descriptors, so spawn's stdio cannot).
 * 126 (dockerd's "cannot invoke") when pid 1 is gone meanwhile. bwrap leaves the descriptor
 * open, so the command has a fd 3 dockerd's exec would not have: the PID namespace it is already
 * in (owned by the user namespace it is already in), which gives it nothing new.
 */
const OPEN_PIDNS = 'exec 3<"$1" || exit 126; shift';

/** Where the exec's own mount namespace holds the host's static busybox (never the container's). */
const EXEC_BUSYBOX = '/dev/busybox-dockgate';

/**
 * What an exec as another user needs inside its sandbox: the host's static busybox (bound
 * read-only into the exec's own /dev, which the container does not see), whose `nsenter` applet
 * joins the container's user namespace when it has one and sets the uid and gid; and the
 * capabilities for that, which the kernel clears at the setuid to a non-root uid. bwrap cannot
 * set another uid without a user namespace of its own, and the host's nsenter and setpriv would
 * read the container's Env as host root (linux/launcher-env.ts); busybox is static, so no loader
 * variable reaches it, and it runs with the container's own capability set plus these.
 */
function userSwitchArgs(busybox: string, joinUserNamespace: boolean): string[] {
  const caps = ['CAP_SETUID', 'CAP_SETGID', ...(joinUserNamespace ? ['CAP_SYS_ADMIN'] : [])];
  return ['--ro-bind', busybox, EXEC_BUSYBOX, ...caps.flatMap((c) => ['--cap-add', c])];
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
