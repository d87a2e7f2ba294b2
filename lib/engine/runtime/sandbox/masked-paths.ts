import { statSync } from 'node:fs';

/**
 * moby's default masked paths (oci/defaults.go `MaskedPaths`, with /proc/interrupts that Docker
 * 28 adds): kernel surfaces a container must not read. A file is covered with /dev/null, a
 * directory with an empty read-only tmpfs, as runc does.
 */
export const MASKED_PATHS = [
  '/proc/acpi', '/proc/asound', '/proc/interrupts', '/proc/kcore', '/proc/keys', '/proc/latency_stats',
  '/proc/sched_debug', '/proc/scsi', '/proc/timer_list', '/proc/timer_stats',
  '/sys/devices/virtual/powercap', '/sys/firmware',
] as const;

/**
 * moby's default read-only paths (`ReadonlyPaths`): /proc's control files. /proc/sys writable
 * lets a container set `kernel.core_pattern` to a program that the kernel then runs as host
 * root at the next crash anywhere on the machine.
 */
export const READONLY_PATHS = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'] as const;

type Kind = 'file' | 'dir' | undefined;

function kindOf(path: string): Kind {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'file';
  } catch {
    return undefined;
  }
}

let cached: string[] | undefined;

/**
 * bwrap's arguments that mask and write-protect those paths in a sandbox's new /proc (given
 * after `--proc /proc`). The kernel is the host's, so what exists there is what the host's
 * /proc shows; a path this kernel lacks is skipped, as runc skips it.
 *
 * - a masked file: `--dev-bind /dev/null` (a plain `--ro-bind` is mounted nodev, where
 *   /dev/null could not even be opened; Docker's masked files read as empty);
 * - a masked directory: an empty tmpfs, then made read-only;
 * - a read-only path: bound read-only from the host's /proc. bwrap can remount only mount
 *   points read-only, and these are plain directories of the new /proc; their content is the
 *   kernel's, not a PID namespace's (/proc/sys/net follows the reader's network namespace).
 *
 * /sys is never the host's sysfs: a sandbox gets a read-only tmpfs there holding only its own
 * cgroups' view (cgroup-view.ts), so Docker's masked /sys paths do not exist in it at all.
 */
export function procProtectionArgs(): string[] {
  if (cached) return [...cached];
  const args: string[] = [];
  for (const path of MASKED_PATHS) {
    if (!path.startsWith('/proc/')) continue;
    const kind = kindOf(path);
    if (kind === 'file') args.push('--dev-bind', '/dev/null', path);
    else if (kind === 'dir') args.push('--perms', '0555', '--tmpfs', path, '--remount-ro', path);
  }
  for (const path of READONLY_PATHS) if (kindOf(path) !== undefined) args.push('--ro-bind', path, path);
  cached = args;
  return [...args];
}
