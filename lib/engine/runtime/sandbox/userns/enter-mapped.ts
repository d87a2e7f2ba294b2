import { viaShell } from '../sandbox-process.js';
import { STAGE, stageSources, withoutCapabilities } from './enter.js';

/** What a rootless launcher enters its mapped user namespace with (rootless-userns.ts). */
export interface MappedTools {
  unshare: string;
  nsenter: string;
  setpriv: string;
  /** The namespace's file (`/proc/<server pid>/fd/<n>`). */
  file: string;
  /** The directory the staging tmpfs covers (one every id may traverse). */
  stageDir: string;
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
  if (user.uid === 0) {
    // nsenter clears the supplementary groups: setpriv gives back the container's gid, as root's only group.
    return [tools.nsenter, [`--user=${tools.file}`, '--setuid=0', `--setgid=${user.gid}`, '--', tools.setpriv, `--groups=${user.gid}`, '--', bwrap, ...args, '--', ...argv]];
  }
  const staged = stageSources(args, tools.stageDir);
  const command = [tools.setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--',
    bwrap, '--unshare-user', '--uid', String(user.uid), '--gid', String(user.gid), ...withoutCapabilities(staged.args), '--', ...argv];
  const [shell, shellArgs] = viaShell(STAGE, [tools.stageDir, String(staged.sources.length), '', ...staged.sources, ...command]);
  return [tools.nsenter, [`--user=${tools.file}`, '--setuid=0', '--setgid=0', '--', tools.unshare, '--mount', '--', shell, ...shellArgs]];
}
