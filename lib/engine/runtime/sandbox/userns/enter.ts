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
  /** Host uid of the namespace's uid 0. */
  uid: number;
  /** The idmap helper (linux/idmap-helper.ts) written in the state directory; none: every bind stays plain. */
  idmap?: string | undefined;
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
 * A host bind (`Binds`, bind `Mounts`: the held sources) whose owner is not the container's root
 * is remounted idmapped through the container's user namespace (linux/idmap-helper.ts), as
 * podman and dockerd with idmapped mounts do: a file of host uid N shows as the container's uid
 * N, and what container root writes there is host root's, so `touch /mnt/x` as root works on a
 * host-root-owned folder as it does on dockerd. Sources container root owns (volumes, the
 * runtime's own files) are bound as they are. Where the kernel or the filesystem cannot idmap
 * (the helper fails, nothing mounted), the bind stays plain: container root is then an
 * unprivileged host uid there (README, "Binds and user namespaces"). `$s` is the stat of
 * {@link MOUNT_HELD}, the owner's uid last; `$2` the staged path.
 */
const IDMAP = '[ -z "$im" ] || [ "${s##*:}" = "$ru" ] || "$im" "$2" "$uf" || :';

/**
 * The held bind sources (`/proc/<pid>/fd/<n>`, held-binds.ts), each bound by a `mount` of its
 * own: a bind mount cannot take a descriptor of another mount namespace (this one is the
 * launcher's own, unshare's), so mount(8) resolves the descriptor's procfs link to the name it
 * has now and mounts that name (`mount -a` does not resolve it, and fails). A link planted there
 * meanwhile would be followed, and is caught here: the mount must be the held object itself
 * (same device and inode), or the launch stops (125), as bubblewrap's `--bind-fd` checks its own.
 * Its arguments are triples (held source, staged path, identity): one `stat` per triple prints both
 * (held first), one line each, with the owner's uid last; then {@link IDMAP}. A launcher inside a
 * user namespace cannot follow the server's descriptor links: its triples carry the walked path
 * and the held object's `dev:ino` (held-binds.ts `identities`), checked against the mount. No
 * held source: no process.
 */
const MOUNT_HELD = 'while [ "$k" -gt 0 ]; do mount --rbind -o X-mount.mkdir "$1" "$2" || exit 125; '
  + 'if [ -n "$3" ]; then [ "$(stat -L -c %d:%i "$2")" = "$3" ] || { echo "bind source $1 changed while it was mounted" >&2; exit 125; }; '
  + 'else s=$(stat -L -c %d:%i:%u "$1" "$2") && [ "${s%%[!0-9:]*}" = "${s##*[!0-9:]}" ] '
  + '|| { echo "bind source $1 changed while it was mounted" >&2; exit 125; }; ' + IDMAP + '; fi; shift 3; k=$((k-1)); done';

/**
 * The staging shell: a tmpfs over {@link STAGE_DIR}, then each source bound (recursively, as
 * bwrap binds) at `<n>`, a directory or a file as the source is. The sources the server names by
 * path (the root filesystem, the cgroup view, the network files…) are bound by one `mount -a`
 * over a table of them ({@link stagingTable}): one process for all, not a `mount` and a `mkdir`
 * for each (these were 9 of the 10 processes of a start's staging). The shell makes the file a
 * file source is bound over (a builtin, no process); mount makes a directory's
 * (`X-mount.mkdir`). The table goes in the tmpfs (dash's `printf` is a builtin; mount does not
 * parse a pipe). The held sources follow ({@link MOUNT_HELD}). Run as host root, before the user
 * namespace is entered: the sources are reached with root's permissions, so the server's 0700
 * state directories and a bind of a 0700 host directory need not be opened to the mapped ids.
 * The mount namespace is private (unshare's default) and goes with the container.
 *
 * Arguments: the staging directory, the table (may be empty), the namespace file (empty for
 * root), the idmap helper (empty: none), the namespace file it idmaps through, the host uid of
 * container root, the number of sources and the sources, the number of held pairs and the pairs.
 */
export const STAGE = [
  'd=$1; t=$2; ns=$3; im=$4; uf=$5; ru=$6; n=$7; shift 7',
  'mount -t tmpfs -o mode=0711 dockgate-stage "$d" || exit 125',
  'i=0; while [ "$i" -lt "$n" ]; do [ -d "$1" ] || : > "$d/$i" || exit 125; shift; i=$((i+1)); done',
  'if [ -n "$t" ]; then printf %s "$t" > "$d/.binds" && mount -a -T "$d/.binds" || exit 125; fi',
  'k=$1; shift',
  MOUNT_HELD,
  `if [ -n "$ns" ]; then exec ${USERNS_FD}<"$ns" || exit 125; fi`,
].join('; ');

/**
 * The `mount -a` table of the staging binds (every source but the held ones, which are left
 * out): source, `<dir>/<n>`, recursive bind, the target directory made when missing.
 */
export function stagingTable(dir: string, sources: readonly string[]): string {
  return sources.map((source, i) => (HELD.test(source) ? '' : `${fstabField(source)} ${fstabField(`${dir}/${i}`)} none rbind,X-mount.mkdir 0 0\n`)).join('');
}

/** A path as one fstab field: libmount's octal escapes for space, tab, newline and backslash. */
function fstabField(path: string): string {
  return path.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

/** A held bind source (held-binds.ts): the launcher checks that what it mounted is the held object. */
const HELD = /^\/proc\/\d+\/fd\/\d+$/;

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
export function inUserNamespace(tools: UsernsTools, bwrap: string, args: readonly string[], argv: readonly string[], user: { uid: number; gid: number; groups?: readonly number[] | undefined }): [string, string[]] {
  const staged = stageSources(args);
  const root = user.uid === 0;
  // Supplementary groups as runc sets them for dockerd: the primary gid, then GroupAdd's. Root's
  // are set by setpriv inside the namespace (its capability there allows it); another user's, as
  // host gids, before bwrap joins the namespace, which keeps them.
  const groups = [...new Set([user.gid, ...(user.groups ?? [])])];
  const command = root
    ? [tools.nsenter, `--user=${tools.file}`, '--setuid=0', `--setgid=${user.gid}`, '--', tools.setpriv, `--groups=${groups.join(',')}`, '--', bwrap, ...staged.args, '--', ...argv]
    : [tools.setpriv, `--regid=${tools.gid}`, `--groups=${groups.map((g) => tools.gid + g).join(',')}`, '--',
      bwrap, '--userns', String(USERNS_FD), '--uid', String(user.uid), '--gid', String(user.gid), ...withoutCapabilities(staged.args), '--', ...argv];
  const [shell, shellArgs] = viaShell(STAGE, [
    ...stageArguments(STAGE_DIR, staged.sources, root ? '' : tools.file, { helper: tools.idmap ?? '', file: tools.file, rootUid: tools.uid }),
    ...command,
  ]);
  return [tools.unshare, ['--mount', '--', shell, ...shellArgs]];
}

/** {@link STAGE}'s arguments for `sources` staged in `dir`: the table, the held pairs, and the idmap of host binds (none: helper ''). */
export function stageArguments(dir: string, sources: readonly string[], namespaceFile: string, idmap: { helper: string; file: string; rootUid: number } = { helper: '', file: '', rootUid: 0 },
  checked?: (held: string) => { path: string; id: string } | undefined): string[] {
  const held = sources.flatMap((source, i) => {
    if (!HELD.test(source)) return [];
    // Inside a user namespace (rootless): the walked path, checked against the held object's identity.
    const check = checked?.(source);
    return check ? [check.path, `${dir}/${i}`, check.id] : [source, `${dir}/${i}`, ''];
  });
  return [
    dir, stagingTable(dir, sources), namespaceFile, idmap.helper, idmap.file, String(idmap.rootUid),
    String(sources.length), ...sources.map((source) => checked?.(source)?.path ?? source), String(held.length / 3), ...held,
  ];
}

/** Whether any of bwrap's arguments binds a held source (held-binds.ts). */
export function bindsHeld(args: readonly string[]): boolean {
  return options(args).some(([option, source]) => BINDS.has(option!) && HELD.test(source ?? ''));
}

/** bwrap's arguments with the capability set replaced by none. */
export function withoutCapabilities(args: readonly string[]): string[] {
  return [...options(args).filter(([option]) => option !== '--cap-add' && option !== '--cap-drop').flat(), '--cap-drop', 'ALL'];
}
