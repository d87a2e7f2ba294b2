import { readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { CgroupController } from '../../linux/cgroup-limits.js';
import type { Cgroups } from '../../linux/cgroups.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import { portRequests } from './network/port-bindings.js';
import { detectV2, v2DelegationCommand, v2Summary, type V2Delegation } from '../../linux/cgroup-v2.js';

/** A cgroup v2 host's delegation to this server's user, read once (cgroup-v2.ts); undefined on cgroup v1. */
let v2Read: { uid: number; d: V2Delegation | undefined } | undefined;
function v2Of(user: Rootless): V2Delegation | undefined {
  if (v2Read?.uid !== user.uid) v2Read = { uid: user.uid, d: detectV2(user.uid) };
  return v2Read.d;
}

/**
 * On a cgroup v2 host, what is delegated and the command that delegates the rest; the sandbox
 * runtime sets its limits through cgroup v1 groups only, so on v2 each limit stays refused and
 * this says so, rather than claim one.
 */
function v2Words(user: Rootless): string | undefined {
  const d = v2Of(user);
  if (!d) return undefined;
  const command = v2DelegationCommand(d, user.uid);
  return `${v2Summary(d)}${command ? `; delegate the controllers once with: ${command}` : ''}; the sandbox runtime sets limits through cgroup v1 groups only, so on this cgroup v2 host they are refused`;
}

/** The server's own user when it does not run as root (rootless), read once at construction. */
export interface Rootless {
  uid: number;
  gid: number;
  /** The login name (`os.userInfo()`), or the uid when the passwd database has none. */
  name: string;
}

/** The limits each controller carries, as the CLI names them (what the start notice lists). */
const LIMITS_OF: Readonly<Record<CgroupController, string>> = {
  memory: '--memory',
  cpu: '--cpus/--cpu-shares',
  cpuset: '--cpuset-cpus',
  pids: '--pids-limit',
};

/** The server's user when its effective uid is not 0; undefined for root (nothing changes there). */
export function rootlessIdentity(): Rootless | undefined {
  const uid = process.geteuid?.() ?? 0;
  if (uid === 0) return undefined;
  let name = String(uid);
  try {
    name = userInfo().username;
  } catch {
    // No passwd entry (a container's arbitrary uid): the number names it.
  }
  return { uid, gid: process.getegid?.() ?? uid, name };
}

/**
 * Where a rootless server keeps its state by default: `$XDG_DATA_HOME/dockgate` (an absolute
 * XDG_DATA_HOME only, as the XDG spec says), else `~/.local/share/dockgate`.
 */
export function rootlessStateDir(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  const data = env.XDG_DATA_HOME;
  return join(data && isAbsolute(data) ? data : join(home, '.local', 'share'), 'dockgate');
}

/**
 * The one command an administrator runs (as root) to hand this server's cgroup v1 groups to its
 * user: each controller's `dockgate` group made and given to it. Undefined when none is missing.
 */
export function delegationCommand(cgroups: Cgroups | undefined, user: Rootless): string | undefined {
  const dirs = (['memory', 'cpu', 'cpuset', 'pids'] as const).map((c) => cgroups?.undelegated(c)).filter((d): d is string => d !== undefined);
  if (dirs.length === 0) return undefined;
  const list = dirs.join(' ');
  return `sudo sh -c 'mkdir -p ${list} && chown -R ${user.name} ${list}'`;
}

/** Why a limit needing `controller` is refused on a rootless server: what to delegate, and how. */
export function undelegatedReason(cgroups: Cgroups | undefined, controller: CgroupController, user: Rootless): string {
  const dir = cgroups?.undelegated(controller);
  const v2 = dir === undefined ? v2Words(user) : undefined;
  if (v2) return `the server runs rootless (as ${user.name}) and the ${controller} cgroup is not available to it (${v2})`;
  if (!dir) return `the server runs rootless (as ${user.name}) and the ${controller} cgroup is not available to it`;
  return `the server runs rootless (as ${user.name}) and the ${controller} cgroup ${dir} is not delegated to it; `
    + `delegate it once with: ${delegationCommand(cgroups, user)!}`;
}

/** The line a rootless server prints at start: the limits it enforces, and how to get the others. */
export function rootlessNotice(cgroups: Cgroups | undefined, user: Rootless, range?: { uid: number; count: number; size: number; blocks: number }): string {
  const have = new Set(cgroups?.controllers ?? []);
  const enforced = (Object.keys(LIMITS_OF) as CgroupController[]).filter((c) => have.has(c)).map((c) => LIMITS_OF[c]);
  const refused = (Object.keys(LIMITS_OF) as CgroupController[]).filter((c) => !have.has(c)).map((c) => LIMITS_OF[c]);
  const command = delegationCommand(cgroups, user);
  const ids = range
    ? `container ids 0-${range.size - 1} mapped (root is ${user.name}, the others its subordinate range from host uid ${range.uid}, ${range.count} ids${range.blocks > 1 ? `, cut into ${range.blocks} owners' ranges` : ': containers without an owner only'})`
    : `one container id mapped (root is ${user.name}; users other than root need a /etc/subuid and /etc/subgid range for ${user.name} and newuidmap)`;
  return `[dockgate] sandbox runtime rootless as ${user.name} (uid ${user.uid}): limits enforced: ${enforced.length > 0 ? enforced.join(', ') : 'none'}`
    + (refused.length > 0 ? `; refused by name: ${refused.join(', ')}${command ? ` (delegate the cgroups with: ${command})` : ` (${v2Words(user) ?? 'no cgroup v1 controller mounted for them'})`}` : '')
    + `; ${ids}`;
}

/** The lowest port an unprivileged process may bind (`net.ipv4.ip_unprivileged_port_start`, 1024 unless lowered). */
export function unprivilegedPortStart(file = '/proc/sys/net/ipv4/ip_unprivileged_port_start'): number {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(n) && n >= 0 ? n : 1024;
  } catch {
    return 1024;
  }
}

/**
 * A rootless server cannot listen below `firstPort`: such a `-p` is refused at create, naming the
 * binding, rather than failing at start (ephemeral ports, `-p 80`, are above it).
 */
export function refusePrivilegedPorts(spec: ContainerSpec, firstPort: number, user: Rootless): void {
  for (const request of portRequests(spec)) {
    if (request.hostPort !== 0 && request.hostPort < firstPort) {
      throw EngineError.invalidParameter(`HostConfig.PortBindings "${request.key}": host port ${request.hostPort} is below ${firstPort}, `
        + `which the server cannot listen on: it runs rootless (as ${user.name}); publish a port of ${firstPort} or above`);
    }
  }
}

/** The user's entry in a subordinate id file (`name:start:count` or `uid:start:count`), as written there; undefined when it has none. */
export function subordinateEntry(user: Rootless, file: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  return text.split('\n').map((l) => l.trim()).find((l) => {
    const [name, start, count] = l.split(':');
    return (name === user.name || name === String(user.uid)) && /^\d+$/.test(start ?? '') && /^\d+$/.test(count ?? '') && Number(count) > 0;
  });
}

/**
 * A rootless server without a mapped range maps one id: container root is the server's user. A
 * container user other than root:root needs more ids: refused (400) naming User and the
 * /etc/subuid and /etc/subgid entries it needs (or, when they are there, the uidmap package's
 * newuidmap and newgidmap, or option userns turned off).
 */
export function refuseOtherUsers(resolved: { uid: number; gid: number }, spec: string, user: Rootless, subuid = '/etc/subuid', subgid = '/etc/subgid'): void {
  if (resolved.uid === 0 && resolved.gid === 0) return;
  const has = subordinateEntry(user, subuid) !== undefined && subordinateEntry(user, subgid) !== undefined;
  throw EngineError.invalidParameter(`User "${spec}": the server runs rootless (as ${user.name}) with a single mapped id (container root is ${user.name}); `
    + (has
      ? `a user other than root needs the subordinate range of /etc/subuid and /etc/subgid mapped, with newuidmap and newgidmap (Debian's uidmap package) and sandboxRuntime option userns not false`
      : `a user other than root needs a subordinate id range: add "${user.name}:100000:65536" (an unused range) to /etc/subuid and /etc/subgid`));
}

/** `uid[:gid]` of a User spec when no image root is there to resolve names (a name counts as not root). */
export function numericUser(spec: string): { uid: number; gid: number } {
  const [u = '', g] = spec.split(':');
  const id = (s: string | undefined): number => (s !== undefined && /^\d+$/.test(s) ? Number(s) : -1);
  return { uid: id(u), gid: g === undefined ? 0 : id(g) };
}
