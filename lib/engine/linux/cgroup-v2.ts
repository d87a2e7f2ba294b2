import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CgroupController } from './cgroup-limits.js';

/** The controllers a rootless server's limits need, as cgroup v2 names them (cpuset is its own). */
const CONTROLLERS: readonly CgroupController[] = ['memory', 'pids', 'cpu', 'cpuset'];

/** What a cgroup v2 (unified) host gives a rootless server: the subtree delegated to its user, and which controllers are enabled there. */
export interface V2Delegation {
  /** The unified hierarchy's mount point (`/sys/fs/cgroup`). */
  root: string;
  /** The server's own group, as /proc/self/cgroup names it (`0::/…`). */
  own: string;
  /**
   * The delegated subtree the server lives in: systemd's `user@UID.service` of the user (its
   * session's services), or the server's own `.service` unit; undefined when it is in neither.
   */
  subtree: string | undefined;
  /** Whether the subtree is the user's `user@UID.service` (else a unit of its own). */
  userService: boolean;
  /** Whether the subtree's `cgroup.subtree_control` and `cgroup.procs` belong to the user (systemd's delegation gives them). */
  owned: boolean;
  /** Controllers enabled for the subtree's children (its `cgroup.subtree_control`), of memory, pids, cpu and cpuset. */
  delegated: CgroupController[];
  /** Controllers of those four missing there. */
  missing: CgroupController[];
}

/** Where to read: the unified hierarchy's mount point and the process's /proc/self/cgroup (a fake root in specs). */
export interface V2Paths {
  cgroupRoot?: string;
  procSelfCgroup?: string;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The cgroup v2 delegation a rootless server (uid `uid`) has, read once at construction: the
 * hierarchy is unified when its root has `cgroup.controllers`; the server's group is the `0::`
 * line of /proc/self/cgroup. Under systemd, an ordinary user's services run below
 * `/user.slice/user-UID.slice/user@UID.service`, which systemd hands to the user (its
 * `cgroup.subtree_control` and `cgroup.procs` chowned to it) with the controllers its
 * `Delegate=` names enabled in its `cgroup.subtree_control` (Debian's default: memory and
 * pids); a system unit with `User=` is delegated by `Delegate=` in its own unit. Undefined on a
 * cgroup v1 (or hybrid) host, where cgroups.ts reads the v1 hierarchies.
 */
export function detectV2(uid: number, paths: V2Paths = {}): V2Delegation | undefined {
  const root = paths.cgroupRoot ?? '/sys/fs/cgroup';
  if (read(join(root, 'cgroup.controllers')) === undefined) return undefined;
  const own = (read(paths.procSelfCgroup ?? '/proc/self/cgroup') ?? '').split('\n').find((l) => l.startsWith('0::'))?.slice(3).trim() ?? '/';
  const parts = own.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  const service = parts.indexOf(`user@${uid}.service`);
  const unit = parts.findIndex((p) => p.endsWith('.service'));
  const at = service >= 0 ? service : unit;
  const subtree = at >= 0 ? `/${parts.slice(0, at + 1).join('/')}` : undefined;
  const dir = subtree === undefined ? undefined : join(root, subtree);
  const enabled = new Set((dir ? read(join(dir, 'cgroup.subtree_control')) ?? '' : '').split(/\s+/).filter((c) => c !== ''));
  const ownedBy = (file: string): boolean => {
    try {
      return statSync(file).uid === uid;
    } catch {
      return false;
    }
  };
  return {
    root, own, subtree, userService: service >= 0,
    owned: dir !== undefined && ownedBy(join(dir, 'cgroup.subtree_control')) && ownedBy(join(dir, 'cgroup.procs')),
    delegated: CONTROLLERS.filter((c) => enabled.has(c)),
    missing: CONTROLLERS.filter((c) => !enabled.has(c)),
  };
}

/**
 * What an administrator runs once so that the controllers are delegated (as rootless dockerd's and
 * podman's guides say): for the user's session services, a drop-in for every `user@.service`
 * naming them in `Delegate=`, then a reload (the user's manager takes it at its next start: log in
 * again, or restart `user@UID.service`); for a system unit, `Delegate=` in that unit. Undefined when
 * nothing is missing and the subtree is the user's.
 */
export function v2DelegationCommand(d: V2Delegation, uid: number): string | undefined {
  if (d.missing.length === 0 && d.owned && d.subtree !== undefined) return undefined;
  const wanted = 'cpu cpuset io memory pids';
  if (d.userService || d.subtree === undefined) {
    return `sudo sh -c 'mkdir -p /etc/systemd/system/user@.service.d && printf "[Service]\\nDelegate=${wanted}\\n" > /etc/systemd/system/user@.service.d/delegate.conf && systemctl daemon-reload && systemctl restart user@${uid}.service'`
      + (d.subtree === undefined ? ` (then start the server from the user's session services, e.g. systemd-run --user --scope, so that it runs below user@${uid}.service)` : '');
  }
  const unit = d.subtree.split('/').at(-1)!;
  return `sudo systemctl edit ${unit}  # add under [Service]: Delegate=${wanted}; then: sudo systemctl restart ${unit}`;
}

/** One line on what a v2 host delegates to the server, for the start notice and the refusals. */
export function v2Summary(d: V2Delegation): string {
  const where = d.subtree === undefined ? `its group ${d.own} is in no delegated subtree` : `${d.subtree} is ${d.owned ? '' : 'not '}the user's${d.delegated.length > 0 ? `, with ${d.delegated.join(', ')} delegated` : ', with no controller delegated'}`;
  return `cgroup v2: ${where}`;
}
