import { viaShell } from '../sandbox-process.js';
import { bindsHeld, options, STAGE, stageArguments, stageSources, withoutCapabilities } from './enter.js';

/** Options that mount something at a path, and the value that is it. */
const MOUNTS: Readonly<Record<string, 'bind' | 'dir'>> = {
  '--bind': 'bind', '--bind-try': 'bind', '--ro-bind': 'bind', '--ro-bind-try': 'bind', '--dev-bind': 'bind', '--dev-bind-try': 'bind',
  '--proc': 'dir', '--dev': 'dir', '--tmpfs': 'dir', '--mqueue': 'dir', '--dir': 'dir',
};

/**
 * bwrap's arguments that make, in the container's root, every path the container's mounts need
 * (the binds as they are, a directory for /proc, /dev, a tmpfs…), and nothing else: run as the
 * namespace's root before a non-root user's bwrap, which has no right to make them in root's
 * tree (an image without /proc, a volume's new mount point). bwrap makes them inside the new
 * root, so a link in the container's tree resolves there, never on the host.
 */
export function mountPointArgs(args: readonly string[]): string[] {
  return options(args).flatMap(([option, ...values]) => {
    const kind = MOUNTS[option!];
    if (kind === 'bind') return [option!, ...values];
    if (kind === 'dir') return ['--dir', values[0]!];
    return [];
  });
}

/**
 * The launcher's step that runs bwrap with {@link mountPointArgs} (the first `$2` arguments),
 * then execs the rest. bwrap's work is done once the mounts are made: its command is the host's
 * /dev/null bound into a fresh tmpfs at /dev, which nothing of the container's tree can be and
 * which cannot be executed, so no code of the container runs here (a mount point it could not
 * make fails the real bwrap, which says why). A NUL-separated list through xargs: the shell has
 * no arrays to slice.
 */
const MOUNT_POINTS = 'b=$1; p=$2; shift 2; i=0; { for a do [ "$i" -lt "$p" ] && printf \'%s\\0\' "$a"; i=$((i+1)); done; '
  + 'printf \'%s\\0\' --tmpfs /dev --ro-bind /dev/null /dev/null -- /dev/null; } | xargs -0 "$b" >/dev/null 2>&1; shift "$p"';

/** What a rootless launcher enters its mapped user namespace with (rootless-userns.ts). */
export interface MappedTools {
  unshare: string;
  nsenter: string;
  setpriv: string;
  /** The namespace's file (`/proc/<server pid>/fd/<n>`). */
  file: string;
  /** The directory the staging tmpfs covers (one every id may traverse). */
  stageDir: string;
  /** The held bind sources' walked paths and identities (held-binds.ts `identities`), by their procfs names. */
  held?: (held: string) => { path: string; id: string } | undefined;
}

/**
 * The program and arguments that run `bwrap args -- argv` as container user `uid`:`gid` on a
 * rootless server whose subordinate range is mapped (run as the server's user, after the cgroup
 * joiner and the seccomp file are set up):
 *
 * - root (uid 0, any gid): nsenter goes into the namespace as its root, which is the server's
 *   user there, and bwrap runs as in a root server's namespace, with the container's capabilities;
 * - any other user: nsenter goes in as root, a private mount namespace stages the host paths bwrap
 *   binds (the server's 0700 state directory is not the user's to traverse; userns/enter.ts),
 *   setpriv becomes the user, and bwrap makes a user namespace of its own mapping that one uid and
 *   gid onto themselves, so the command runs as host `range + uid - 1`, with no capability.
 *   (bwrap 0.8's `--userns` cannot be used here: it switches uid before gid, and the launcher's
 *   uid is the namespace's root, so the uid switch drops the capability the gid switch needs.)
 *   Other ids show as nobody inside, as in any single-id namespace.
 */
export function inMappedNamespace(tools: MappedTools, bwrap: string, args: readonly string[], argv: readonly string[], user: { uid: number; gid: number }): [string, string[]] {
  if (user.uid === 0 && !bindsHeld(args)) {
    // nsenter clears the supplementary groups: setpriv gives back the container's gid, as root's only group.
    return [tools.nsenter, [`--user=${tools.file}`, '--setuid=0', `--setgid=${user.gid}`, '--', tools.setpriv, `--groups=${user.gid}`, '--', bwrap, ...args, '--', ...argv]];
  }
  const staged = stageSources(args, tools.stageDir);
  if (user.uid === 0) {
    // Root with held bind sources: staged (and checked to be the held objects) in a mount namespace of its own first.
    const [shell, shellArgs] = viaShell(STAGE, [...stageArguments(tools.stageDir, staged.sources, '', undefined, tools.held),
      tools.setpriv, `--groups=${user.gid}`, '--', bwrap, ...staged.args, '--', ...argv]);
    return [tools.nsenter, [`--user=${tools.file}`, '--setuid=0', `--setgid=${user.gid}`, '--', tools.unshare, '--mount', '--', shell, ...shellArgs]];
  }
  const command = [tools.setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, `--groups=${user.gid}`, '--',
    bwrap, '--unshare-user', '--uid', String(user.uid), '--gid', String(user.gid), ...withoutCapabilities(staged.args), '--', ...argv];
  const points = mountPointArgs(staged.args);
  const [pointsShell, pointsArgs] = viaShell(MOUNT_POINTS, [bwrap, String(points.length), ...points, ...command]);
  const [shell, shellArgs] = viaShell(STAGE, [...stageArguments(tools.stageDir, staged.sources, '', undefined, tools.held), pointsShell, ...pointsArgs]);
  return [tools.nsenter, [`--user=${tools.file}`, '--setuid=0', '--setgid=0', '--', tools.unshare, '--mount', '--', shell, ...shellArgs]];
}
