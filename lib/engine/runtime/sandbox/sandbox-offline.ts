import type { LocalProcess } from '../local/local-container.js';
import { launchSandbox } from './sandbox-process.js';
import { seccompArgs } from './seccomp/seccomp-fd.js';
import { procProtectionArgs } from './masked-paths.js';
import { cgroupViewArgs, UNSHARE_CGROUP } from './cgroup-view.js';

/** What a copy into or out of a stopped container may do as root: own and write files, nothing else. */
const COPY_CAPS = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'MKNOD'];

/**
 * Runs a command (the image's own `tar` or `stat`) on a stopped container's root filesystem copy,
 * in a fresh bubblewrap sandbox rooted there: no network, own PID/IPC/UTS namespaces, only the
 * capabilities a copy needs. Paths and symlinks resolve inside that root, as for a running
 * container, so `docker cp` (and testcontainers' copy before start) works on a created container
 * without ever resolving a container path on the host.
 */
export function runOnRootfs(run: {
  bwrap: string; rootfs: string; argv: string[]; stdin: boolean; output: (stream: 1 | 2, data: Buffer) => void;
  /** Into the runtime's user namespace as the container's root (userns/); none: as the server's user. */
  enter?: (bwrap: string, args: string[], argv: string[]) => [string, string[]];
  /** The seccomp filter file (the image's tar is the image's code: it runs confined as the container would). */
  seccompFile?: string;
  /** The container's binds and volumes (host directory at container path), parents first, so a copy reaches them as the container does. */
  binds?: readonly { source: string; target: string; readOnly: boolean }[];
}): Promise<LocalProcess> {
  const args = [
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-net', UNSHARE_CGROUP, '--die-with-parent', '--new-session', '--as-pid-1',
    // The same /proc masks and /sys as a running container's (a copy has no cgroups: an empty view).
    '--bind', run.rootfs, '/', '--proc', '/proc', ...procProtectionArgs(), '--dev', '/dev', ...cgroupViewArgs({}),
    ...(run.binds ?? []).flatMap((b) => [b.readOnly ? '--ro-bind' : '--bind', b.source, b.target]),
    '--cap-drop', 'ALL', ...COPY_CAPS.flatMap((c) => ['--cap-add', `CAP_${c}`]),
    ...seccompArgs(run.seccompFile),
    '--chdir', '/',
  ];
  return launchSandbox({
    bwrap: run.bwrap,
    args,
    argv: run.argv,
    env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
    openStdin: run.stdin,
    init: false,
    output: run.output,
    ...(run.enter ? { enter: run.enter } : {}),
    ...(run.seccompFile ? { seccompFile: run.seccompFile } : {}),
  });
}
