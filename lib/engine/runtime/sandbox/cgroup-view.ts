import type { CgroupController } from '../../linux/cgroup-limits.js';

/**
 * What a container sees of cgroups, as under dockerd with a private cgroup namespace: its own
 * groups and nothing of the host's.
 *
 * - `--unshare-cgroup`: bubblewrap starts the container in a new cgroup namespace whose root is
 *   the group it is in (the launcher joins the container's groups before bwrap runs, see
 *   sandbox-process.ts), so /proc/self/cgroup shows `/` for every hierarchy, never a host path.
 * - /sys/fs/cgroup/<controller>: each of the container's own groups (memory, cpu, pids), bound
 *   read-only, so `memory.limit_in_bytes`, `cpu.cfs_quota_us` and `pids.max` are its limits (JVMs
 *   and Node size their heaps from them). Controllers it has no group of are absent. /sys itself
 *   is a read-only tmpfs holding only that: the rootfs copy is not written to make mount points.
 */
export function cgroupViewArgs(dirs: Readonly<Partial<Record<CgroupController, string>>>): string[] {
  const args = ['--tmpfs', '/sys', '--tmpfs', '/sys/fs/cgroup'];
  for (const [controller, dir] of Object.entries(dirs)) args.push('--ro-bind', dir, `/sys/fs/cgroup/${controller}`);
  return [...args, '--remount-ro', '/sys/fs/cgroup', '--remount-ro', '/sys'];
}

/** bwrap's argument that gives a container its own cgroup namespace (not for an exec, which joins the container's with nsenter). */
export const UNSHARE_CGROUP = '--unshare-cgroup';
