import { existsSync } from 'node:fs';
import { EngineError } from '../../../engine-api/engine-error.js';
import { bindEntryOf, type BindSpec as TypedBind, type ContainerSpec, type MountSpec } from '../../../engine-api/container-spec.js';
import { DEFAULT_CAPABILITY_NAMES } from '../../../engine-api/default-capabilities.js';
import type { ResolvedUser } from './passwd.js';
import { seccompArgs } from './seccomp/seccomp-fd.js';
import { cgroupViewArgs, UNSHARE_CGROUP } from './cgroup-view.js';
import type { CgroupController } from '../../linux/cgroup-limits.js';
import { procProtectionArgs } from './masked-paths.js';

/** How one container runs under bubblewrap, beyond its create body. */
export interface BwrapPlan {
  /** The container's own writable root filesystem copy. */
  rootfs: string;
  /** Who runs. Without the runtime's user namespace (`userns`), bwrap makes one mapping this uid/gid unless both are 0. */
  user: ResolvedUser;
  /** Under a terminal: no `--new-session` (the terminal is the container's own, see below). */
  tty: boolean;
  /**
   * Host directories (on a host tmpfs) bound at each `HostConfig.Tmpfs` path, so that the
   * container and its execs share the files (dockerd's exec sees the container's tmpfs). A path
   * not listed gets bwrap's own, private tmpfs.
   */
  tmpfs?: Readonly<Record<string, string>>;
  /** The container's compiled seccomp filter (seccomp/), opened by the launcher; none: unconfined. */
  seccompFile?: string;
  /** The container's cgroup directories, shown read-only at /sys/fs/cgroup (cgroup-view.ts). */
  cgroupDirs?: Readonly<Partial<Record<CgroupController, string>>>;
  /**
   * The runtime's user namespace holds every container (userns/): the launcher enters it and
   * switches to `user` there, so bwrap makes no user namespace of its own.
   */
  userns?: boolean;
  /** The container's hostname (its Hostname, else its short id); none keeps the server's (host network mode). */
  hostname?: string;
  /**
   * Files the runtime writes for the container, bound over its root (container path -> host
   * file): /etc/resolv.conf and /etc/hosts of its own network (network/container-network.ts).
   * Before the binds, so a bind of the same path wins, as with dockerd.
   */
  files?: Readonly<Record<string, string>>;
  /**
   * What bwrap's launcher binds for each host bind source (`Binds`, bind `Mounts`): the procfs
   * name of the descriptor the server opened for it at start (held-binds.ts). None: the path.
   */
  bindSource?: (source: string) => string;
}

/**
 * bwrap's arguments for a create body. Pid 1: without `HostConfig.Init` the command itself
 * (`--as-pid-1`), as dockerd makes it; with Init, bwrap's own reaping init, which stays pid 1
 * and reaps orphans while the runtime delivers signals to the command (pid 2), as docker-init
 * (tini) forwards them. `--new-session` (setsid) keeps a container from pushing input into the
 * server's terminal (TIOCSTI); a Tty container runs on its own pty and keeps it as its
 * controlling terminal instead, so job control works in `docker run -it … sh`.
 */
export function bwrapArgs(spec: ContainerSpec, plan: BwrapPlan): string[] {
  const { host } = spec;
  // UTSMode and IpcMode `host` keep the server's namespace (checked in sandbox-fields.ts).
  const args = ['--unshare-pid', ...(host.ipcMode === 'host' ? [] : ['--unshare-ipc']), ...(host.utsMode === 'host' ? [] : ['--unshare-uts']), UNSHARE_CGROUP, '--die-with-parent'];
  if (!plan.tty) args.push('--new-session');
  if (host.init !== true) args.push('--as-pid-1');
  if (host.networkMode === 'none') args.push('--unshare-net');
  args.push(...filesystemArgs(spec, plan), ...containerCapabilityArgs(spec), ...seccompArgs(plan.seccompFile));
  if (!plan.userns && hasUserNamespace(plan.user)) {
    args.push('--unshare-user', '--uid', String(plan.user.uid), '--gid', String(plan.user.gid));
  }
  // The UTS namespace's name (bwrap's new one would keep the server's): the plan's, else the spec's Hostname.
  const hostname = plan.hostname ?? (spec.hostname !== '' ? spec.hostname : undefined);
  if (hostname !== undefined && host.utsMode !== 'host') args.push('--hostname', hostname);
  args.push('--chdir', spec.workingDir !== '' ? spec.workingDir : '/');
  return args;
}

/**
 * A container whose user is not root:root runs in its own user namespace mapping just that uid
 * and gid. So does every container of a rootless server (not root: bwrap always makes one
 * there), root's too: `--uid 0 --gid 0` maps container root onto the server's user in a single
 * namespace, which owns the container's network namespace (slirp4netns joins it, slirp-stack.ts).
 */
export function hasUserNamespace(user: ResolvedUser): boolean {
  return user.uid !== 0 || user.gid !== 0 || RUNS_ROOTLESS;
}

/** The server is not root, read once (rootless.ts). */
const RUNS_ROOTLESS = (process.geteuid?.() ?? 0) !== 0;

/**
 * bwrap's arguments for a root exec in a running container without a user namespace (its
 * caller has joined the container's network, IPC and UTS namespaces with nsenter). bwrap joins
 * the container's PID namespace (`--pidns`, an open descriptor of `/proc/<pid1>/ns/pid`) rather
 * than making one, so the exec is a process of the container and its `/proc` is the container's;
 * it builds a mount namespace from the same host directories as the container (root filesystem
 * copy, binds, the shared tmpfs directories) and applies the container's capability set itself,
 * which is what dockerd gives an exec. No `--as-pid-1`, `--hostname` or `--unshare-*`: those
 * made the container and are joined, not re-made.
 */
export function bwrapExecArgs(spec: ContainerSpec, plan: BwrapPlan, pidnsFd: number, cwd: string): string[] {
  const args = ['--pidns', String(pidnsFd), '--die-with-parent'];
  if (!plan.tty) args.push('--new-session');
  args.push(...filesystemArgs(spec, plan), ...containerCapabilityArgs(spec), ...seccompArgs(plan.seccompFile), '--chdir', cwd);
  return args;
}

/** The container's root filesystem copy, its /proc (Docker's masked and read-only paths: masked-paths.ts), /dev, /sys (cgroup-view.ts), Binds, bind Mounts and Tmpfs. */
function filesystemArgs(spec: ContainerSpec, plan: BwrapPlan): string[] {
  // /sys: a read-only tmpfs holding only the container's cgroup view, so none of the host's sysfs
  // (Docker's masked /sys paths included) shows at all.
  const args = [spec.host.readonlyRootfs ? '--ro-bind' : '--bind', plan.rootfs, '/', '--proc', '/proc', ...procProtectionArgs(), '--dev', '/dev',
    ...cgroupViewArgs(plan.cgroupDirs ?? {})];
  for (const [path, file] of Object.entries(plan.files ?? {})) args.push('--bind', file, path);
  for (const b of bindSpecs(spec)) args.push(b.readOnly ? '--ro-bind' : '--bind', plan.bindSource ? plan.bindSource(b.source) : b.source, b.target);
  for (const path of tmpfsPaths(spec)) {
    const shared = plan.tmpfs?.[path];
    args.push(...(shared === undefined ? ['--tmpfs', path] : ['--bind', shared, path]));
  }
  return args;
}

/** The `HostConfig.Tmpfs` mount points, in the body's order. */
export function tmpfsPaths(spec: ContainerSpec): string[] {
  return Object.keys(spec.host.tmpfs);
}

function containerCapabilityArgs({ host }: ContainerSpec): string[] {
  return capabilityArgs(host.capAdd, host.capDrop);
}

/** bwrap's capability arguments: dockerd's default set (a container gets these and no others) with CapAdd and CapDrop applied. */
export function capabilityArgs(add: readonly string[], drop: readonly string[]): string[] {
  const norm = (c: string): string => c.toUpperCase().replace(/^CAP_/, '');
  const dropped = new Set(drop.map(norm));
  const added = add.map(norm);
  if (added.includes('ALL')) return [...dropped].flatMap((c) => (c === 'ALL' ? ['--cap-drop', 'ALL'] : ['--cap-drop', `CAP_${c}`]));
  const caps = dropped.has('ALL') ? added : [...new Set([...DEFAULT_CAPABILITY_NAMES, ...added])].filter((c) => !dropped.has(c));
  return ['--cap-drop', 'ALL', ...caps.flatMap((c) => ['--cap-add', `CAP_${c}`])];
}

export interface BindSpec { source: string; target: string; readOnly: boolean }

/** Every host bind of a spec, `Binds` (typed at decode) then bind `Mounts`, in the order bwrap mounts them. */
export function bindSpecs({ host }: ContainerSpec): BindSpec[] {
  return [...host.binds.map(hostBind), ...host.mounts.map(mountBind)];
}

/** A typed bind the sandbox mounts: `/host:/container[:ro|rw]`; named volumes and other modes are refused, naming the field. */
function hostBind(bind: TypedBind): BindSpec {
  const { source, target, modes } = bind;
  const entry = bindEntryOf(bind);
  if (!source.startsWith('/') || !target.startsWith('/')) {
    throw EngineError.invalidParameter(`HostConfig.Binds "${entry}": the sandbox runtime accepts only /host/path:/container/path[:ro|rw]`);
  }
  const mode = modes.join(',');
  if (modes.length > 1 || (mode !== '' && mode !== 'ro' && mode !== 'rw')) throw EngineError.invalidParameter(`HostConfig.Binds "${entry}": mode "${mode}" is not supported (ro or rw)`);
  if (!existsSync(source)) throw EngineError.invalidParameter(`HostConfig.Binds "${entry}": host path does not exist`);
  return { source, target, readOnly: bind.readOnly };
}

function mountBind(mount: MountSpec): BindSpec {
  if (mount.type !== 'bind') throw EngineError.invalidParameter(`HostConfig.Mounts: Type "${String(mount.type)}" is not supported by the sandbox runtime (bind only)`);
  for (const k of Object.keys(mount.options)) {
    if (k !== 'Consistency') throw EngineError.invalidParameter(`HostConfig.Mounts.${k} is not supported by the sandbox runtime`);
  }
  const source = mount.source ?? '';
  return hostBind({ source, target: mount.target, modes: [mount.readOnly ? 'ro' : 'rw'], readOnly: mount.readOnly, propagation: '' });
}
