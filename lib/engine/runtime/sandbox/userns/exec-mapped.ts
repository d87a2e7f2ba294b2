import { viaShell } from '../sandbox-process.js';
import { bindsHeld, options, STAGE, stageArguments, stageSources, withoutCapabilities } from './enter.js';
import type { MappedTools } from './enter-mapped.js';

/**
 * A /proc of the container's PID namespace over the host's, in the exec's own (staging) mount
 * namespace: a child nsenter puts in that PID namespace mounts it, as the mapped namespace's root
 * (which has every capability over the container's nested namespace), then goes on. From there
 * pids are the container's: the nsenter that follows finds the container's namespaces at pid 1,
 * and bwrap, whose own bookkeeping reads /proc by the pids it sees, reads the right processes.
 * bwrap, as the container's user in a namespace below the container's, could not mount it itself
 * (it has no capability over the container's PID namespace): it binds this one.
 * Arguments: nsenter, the container's pid 1 (a host pid).
 */
const JOIN_PID = 'ne=$1; p=$2; shift 2; set -- "$ne" --target "$p" --pid -- /bin/sh -c \'mount -t proc -o nosuid,nodev,noexec proc /proc || exit 126; exec "$@"\' sh "$@"';

/**
 * An exec's bwrap arguments (bwrap-args.ts bwrapExecArgs, sources staged) for a process that is
 * already in the container's PID namespace: no `--pidns` (nsenter joined it), and the /proc
 * {@link JOIN_PID} mounted bound where bwrap would mount one.
 */
function joinedArgs(args: readonly string[]): string[] {
  return options(args).flatMap(([option, ...values]) => {
    if (option === '--pidns') return [];
    if (option === '--proc') return ['--bind', '/proc', values[0]!];
    return [option!, ...values];
  });
}

/**
 * `docker exec` as a non-root user into a container of a rootless server (`containerRoot`: one
 * running as root, whose namespaces are the mapped namespace's own) or into one that runs as a
 * non-root user, in bwrap's
 * nested single-id user namespace (enter-mapped.ts inMappedNamespace): the same way in as its
 * start, then its namespaces joined.
 *
 * As the mapped namespace's root (nsenter), a private mount namespace stages the host paths bwrap
 * binds (STAGE, as at start) and a /proc of the container's PID namespace ({@link STAGE_PROC}).
 * setpriv gives the process the user's gid as its group list (its nested namespace forbids
 * setgroups), then nsenter joins the container's user, PID, network, IPC, UTS and cgroup
 * namespaces and becomes the user there (`-S`/`-G`, keeping that list), as the container's own
 * process is, with no capability. bwrap, as that user, makes its own user namespace mapping the
 * same uid and gid, builds the container's mount namespace from the staged paths and runs the
 * command under the container's filter, with none of its capabilities (a non-root process has
 * none in effect). Only the container's own uid and gid are mapped there: another user is
 * refused before this (sandbox-exec.ts).
 */
export function execInMappedNamespace(tools: MappedTools, init: number, bwrap: string, args: readonly string[], argv: readonly string[], user: { uid: number; gid: number }, containerRoot = false): [string, string[]] {
  const staged = stageSources(args, tools.stageDir);
  if (user.uid === 0) return rootExec(tools, init, bwrap, args, staged, argv);
  const uid = String(user.uid);
  const gid = String(user.gid);
  // A root container's namespaces belong to the mapped namespace itself, which the launcher is in:
  // joined without --user, then setpriv becomes the user (with the capability to, as its root).
  const join = containerRoot
    ? [tools.nsenter, '--target', '1', '--net', '--ipc', '--uts', '--cgroup', '--', tools.setpriv, `--reuid=${uid}`, `--regid=${gid}`, `--groups=${gid}`, '--']
    : [tools.setpriv, `--groups=${gid}`, '--', tools.nsenter, '--target', '1', '--user', '--net', '--ipc', '--uts', '--cgroup', '--preserve-credentials', '-S', uid, '-G', gid, '--'];
  const command = [...join,
    bwrap, '--unshare-user', '--uid', uid, '--gid', gid, ...withoutCapabilities(joinedArgs(staged.args)), '--', ...argv];
  const [joinShell, joinArgs] = viaShell(JOIN_PID, [tools.nsenter, String(init), ...command]);
  const [shell, shellArgs] = viaShell(STAGE, [...stageArguments(tools.stageDir, staged.sources, '', undefined, tools.held), joinShell, ...joinArgs]);
  return [tools.nsenter, [`--user=${tools.file}`, '--setuid=0', '--setgid=0', '--', tools.unshare, '--mount', '--', shell, ...shellArgs]];
}

/**
 * An exec into a root container of a rootless server: nsenter joins its namespaces (its user
 * namespace is the mapped one, whose root the server's user is), and bwrap joins its PID
 * namespace as on any exec (sandbox-exec.ts). With held bind sources, a private mount namespace
 * first stages them by their walked paths, checked to be the held objects (userns/enter.ts STAGE),
 * since bwrap there cannot follow the server's descriptor links; without, bwrap binds as it is given.
 */
function rootExec(tools: MappedTools, init: number, bwrap: string, args: readonly string[], staged: { args: string[]; sources: string[] }, argv: readonly string[]): [string, string[]] {
  const join = [tools.nsenter, '--target', String(init), '--user', '--preserve-credentials', '--net', '--ipc', '--uts', '--cgroup', '--'];
  if (!bindsHeld(args)) return [join[0]!, [...join.slice(1), bwrap, ...args, '--', ...argv]];
  const [shell, shellArgs] = viaShell(STAGE, [...stageArguments(tools.stageDir, staged.sources, '', undefined, tools.held), bwrap, ...staged.args, '--', ...argv]);
  return [join[0]!, [...join.slice(1), tools.unshare, '--mount', '--', shell, ...shellArgs]];
}
