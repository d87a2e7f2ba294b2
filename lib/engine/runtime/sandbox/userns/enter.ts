import { READONLY_PATHS } from '../masked-paths.js';
import { viaShell } from '../sandbox-process.js';

/** The host tools a launcher uses to enter the user namespace. */
export interface UsernsTools {
  /** util-linux `unshare` (a private mount namespace for the staging binds). */
  unshare: string;
  /** util-linux `nsenter` (root joins the namespace as its uid 0). */
  nsenter: string;
  /** util-linux `setpriv` (a non-root user's launcher takes the range's first gid, see below). */
  setpriv: string;
  /** The user namespace's file (UserNamespace.file). */
  file: string;
  /** Host gid of the namespace's gid 0. */
  gid: number;
}

/**
 * Where a launcher binds the host paths bubblewrap mounts (root filesystem copy, Binds, shared
 * tmpfs directories, cgroup view), in a mount namespace of its own: a tmpfs of mode 0711 mounted
 * over this (empty) directory, with one bind per source.
 */
export const STAGE_DIR = '/run/dockgate-stage';

/** The descriptor bubblewrap's `--userns` reads the namespace from, for a non-root user (one digit: dash, the launcher shell, takes no more; see seccomp-fd.ts). */
const USERNS_FD = 7;

/**
 * bwrap options and how many arguments each takes (bubblewrap 0.8's `--help`), to find the host
 * paths among its arguments without mistaking a `--setenv` value for an option. An option not
 * listed throws: a new one must be added here, never skipped.
 */
const ARITY: Readonly<Record<string, number>> = {
  ...Object.fromEntries(['--unshare-all', '--share-net', '--unshare-user', '--unshare-user-try', '--unshare-ipc', '--unshare-pid', '--unshare-net',
    '--unshare-uts', '--unshare-cgroup', '--unshare-cgroup-try', '--disable-userns', '--assert-userns-disabled', '--clearenv', '--new-session',
    '--die-with-parent', '--as-pid-1', '--level-prefix'].map((o) => [o, 0])),
  ...Object.fromEntries(['--args', '--argv0', '--userns', '--userns2', '--pidns', '--uid', '--gid', '--hostname', '--chdir', '--unsetenv',
    '--lock-file', '--sync-fd', '--remount-ro', '--exec-label', '--file-label', '--proc', '--dev', '--tmpfs', '--mqueue', '--dir', '--seccomp',
    '--add-seccomp-fd', '--block-fd', '--userns-block-fd', '--info-fd', '--json-status-fd', '--cap-add', '--cap-drop', '--perms', '--size'].map((o) => [o, 1])),
  ...Object.fromEntries(['--setenv', '--bind', '--bind-try', '--dev-bind', '--dev-bind-try', '--ro-bind', '--ro-bind-try', '--bind-fd', '--ro-bind-fd',
    '--file', '--bind-data', '--ro-bind-data', '--symlink', '--chmod'].map((o) => [o, 2])),
};
const BINDS = new Set(['--bind', '--bind-try', '--dev-bind', '--dev-bind-try', '--ro-bind', '--ro-bind-try']);

/**
 * Bind sources bwrap reaches itself, unstaged: the kernel's own paths of every container's /proc
 * protection (masked-paths.ts), which every uid may traverse, so staging them gains nothing. Each
 * staged source costs the launcher a `mount` (and a `mkdir`) process: these were 6 of the 11 a
 * container's start made, some 30 ms of `docker run --rm`.
 */
const UNSTAGED: ReadonlySet<string> = new Set(['/dev/null', ...READONLY_PATHS]);

/** bwrap's arguments cut into options, each with its values. */
export function options(args: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < args.length;) {
    const arity = ARITY[args[i]!];
    if (arity === undefined) throw new Error(`bwrap option ${args[i]!} is not known to the user namespace launcher (userns/enter.ts)`);
    out.push(args.slice(i, i + 1 + arity));
    i += 1 + arity;
  }
  return out;
}

/**
 * bwrap's arguments with every bind source but {@link UNSTAGED} replaced by its staged path, and the sources in order.
 * Exported for the specs.
 */
export function stageSources(args: readonly string[], stageDir = STAGE_DIR): { args: string[]; sources: string[] } {
  const sources: string[] = [];
  const staged = options(args).map(([option, ...values]) => {
    if (!BINDS.has(option!) || UNSTAGED.has(values[0]!)) return [option!, ...values];
    sources.push(values[0]!);
    return [option!, `${stageDir}/${sources.length - 1}`, values[1]!];
  });
  return { args: staged.flat(), sources };
}

/**
 * After a held bind source (`/proc/<pid>/fd/<n>`, held-binds.ts) is mounted: the mount must be
 * the held object itself (same device and inode), or the launch stops (125). A bind mount cannot
 * take a descriptor of another mount namespace (this one is the launcher's own, unshare's), so
 * mount(8) resolves the descriptor's procfs link to the name it has now and mounts that name: a
 * link planted there meanwhile would be followed, and is caught here, as bubblewrap's `--bind-fd`
 * checks its own. One `stat` prints both (held first), one line each.
 */
const VERIFY_HELD = 'case "$1" in /proc/[0-9]*/fd/[0-9]*) s=$(stat -L -c %d:%i "$1" "$d/$i") && [ "${s%%[!0-9:]*}" = "${s##*[!0-9:]}" ] '
  + '|| { echo "bind source $1 changed while it was mounted" >&2; exit 125; };; esac';

/**
 * The staging shell: a tmpfs over {@link STAGE_DIR}, then each source bound (recursively, as
 * bwrap binds) at `<n>`, a directory or a file as the source is. Run as host root, before the user
 * namespace is entered: the sources are reached with root's permissions, so the server's 0700
 * state directories and a bind of a 0700 host directory need not be opened to the mapped ids.
 * The mount namespace is private (unshare's default) and goes with the container.
 */
export const STAGE = [
  'd=$1; n=$2; ns=$3; shift 3',
  'mount -t tmpfs -o mode=0711 dockgate-stage "$d" || exit 125',
  `i=0; while [ "$i" -lt "$n" ]; do if [ -d "$1" ]; then mkdir "$d/$i"; else : > "$d/$i"; fi; mount --rbind "$1" "$d/$i" || exit 125; ${VERIFY_HELD}; shift; i=$((i+1)); done`,
  `if [ -n "$ns" ]; then exec ${USERNS_FD}<"$ns" || exit 125; fi`,
].join('; ');

/**
 * The program and arguments that run `bwrap args -- argv` in the user namespace as container user
 * `uid`:`gid` (run as host root, after the cgroup joiner and the seccomp file are set up):
 *
 * - root: nsenter joins the namespace as its uid 0 (and the container's gid), and bwrap runs
 *   there with the capabilities it keeps for the container;
 * - any other user: bwrap joins it itself (`--userns`) and becomes the user before it mounts
 *   anything (`--uid`/`--gid`), with no capability (a non-root process of a Docker container has
 *   none in effect). bwrap switches only to ids other than the ones it runs as, and host root's
 *   ids have no place in the map (bwrap could not even make its own root directory): so root
 *   enters with nsenter, and a non-root user's launcher first takes the range's first gid as its
 *   real gid (setpriv, still host uid 0), so that `--gid 0` is a switch too.
 */
export function inUserNamespace(tools: UsernsTools, bwrap: string, args: readonly string[], argv: readonly string[], user: { uid: number; gid: number }): [string, string[]] {
  const staged = stageSources(args);
  const root = user.uid === 0;
  const command = root
    ? [tools.nsenter, `--user=${tools.file}`, '--setuid=0', `--setgid=${user.gid}`, '--', bwrap, ...staged.args, '--', ...argv]
    : [tools.setpriv, `--regid=${tools.gid}`, '--clear-groups', '--',
      bwrap, '--userns', String(USERNS_FD), '--uid', String(user.uid), '--gid', String(user.gid), ...withoutCapabilities(staged.args), '--', ...argv];
  const [shell, shellArgs] = viaShell(STAGE, [STAGE_DIR, String(staged.sources.length), root ? '' : tools.file, ...staged.sources, ...command]);
  return [tools.unshare, ['--mount', '--', shell, ...shellArgs]];
}

/** bwrap's arguments with the capability set replaced by none. */
export function withoutCapabilities(args: readonly string[]): string[] {
  return [...options(args).filter(([option]) => option !== '--cap-add' && option !== '--cap-drop').flat(), '--cap-drop', 'ALL'];
}
