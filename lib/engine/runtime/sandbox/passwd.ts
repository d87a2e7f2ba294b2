import { EngineError } from '../../../engine-api/engine-error.js';
import { Beneath, BeneathError } from '../../linux/beneath.js';

/** Who a container's process runs as, resolved against its image's /etc/passwd and /etc/group. */
export interface ResolvedUser {
  uid: number;
  gid: number;
  /** The passwd entry's home directory ("/" when the user has no entry), for HOME. */
  home: string;
  /** Supplementary gids (`HostConfig.GroupAdd`, resolved by {@link resolveGroupsIn}); none: no supplementary group. */
  groups?: readonly number[];
}

interface Entry { name: string; id: number; gid: number; home: string }

/**
 * Resolves a `User` value (`name`, `uid`, `name:group`, `uid:gid`, any mix) the way runc does for
 * dockerd (libcontainer/user GetExecUser): the user is looked up in /etc/passwd by name or uid;
 * its entry gives the uid, the primary gid and the home directory. A numeric uid with no entry
 * runs as that uid with gid 0 and home "/". A group, when given, is looked up in /etc/group by
 * name or gid, and a numeric gid with no entry is used as it is. A name with no entry is refused
 * with dockerd's words (`unable to find user x: no matching entries in passwd file`), as a 400
 * naming User: at start, as dockerd (the create is taken: {@link resolveUserAtCreate}).
 *
 * @example
 * resolveUser('nobody', 'nobody:x:65534:65534::/nonexistent:/bin/false\n', '');
 * // { uid: 65534, gid: 65534, home: '/nonexistent' }
 */
export function resolveUser(spec: string, passwd: string, group: string): ResolvedUser {
  const [userPart = '', groupPart] = spec.split(':', 2);
  if (userPart === '' && groupPart === undefined) return { uid: 0, gid: 0, home: '/root' };
  const users = parseEntries(passwd, 'passwd');
  const numericUser = /^\d+$/.test(userPart) ? Number(userPart) : undefined;
  const entry = users.find((u) => u.name === userPart) ?? (numericUser !== undefined ? users.find((u) => u.id === numericUser) : undefined);
  if (!entry && numericUser === undefined) {
    throw unknownAccount(`User "${spec}": unable to find user ${userPart}: no matching entries in passwd file`);
  }
  const uid = entry?.id ?? (numericUser as number);
  let gid = entry?.gid ?? 0;
  if (groupPart !== undefined && groupPart !== '') {
    const groups = parseEntries(group, 'group');
    const numericGroup = /^\d+$/.test(groupPart) ? Number(groupPart) : undefined;
    const g = groups.find((e) => e.name === groupPart) ?? (numericGroup !== undefined ? groups.find((e) => e.id === numericGroup) : undefined);
    if (!g && numericGroup === undefined) {
      throw unknownAccount(`User "${spec}": unable to find group ${groupPart}: no matching entries in group file`);
    }
    gid = g?.id ?? (numericGroup as number);
  }
  if (uid > 0xfffffffe || gid > 0xfffffffe) throw EngineError.invalidParameter(`User "${spec}": uids and gids must be below 2^32-1`);
  return { uid, gid, home: entry?.home || '/' };
}

/** The refusal of a user or group name the image has no entry for (dockerd's words), marked so that a create can let it through. */
function unknownAccount(message: string): EngineError {
  return Object.assign(EngineError.invalidParameter(message), { unknownAccount: true });
}

/**
 * {@link resolveUserIn} at create: a user or group name the image has no entry for is undefined
 * (dockerd takes the create and its start fails with those words: docker-compose's `run --user`
 * reads the container back); anything else wrong with `User` or the files is refused as there.
 */
export async function resolveUserAtCreate(rootfs: string, spec: string): Promise<ResolvedUser | undefined> {
  try {
    return await resolveUserIn(rootfs, spec);
  } catch (error) {
    if ((error as { unknownAccount?: boolean }).unknownAccount) return undefined;
    throw error;
  }
}

/** Bytes of /etc/passwd or /etc/group read at most; a larger file is refused. */
export const MAX_ACCOUNT_FILE_BYTES = 1 << 20;

/**
 * {@link resolveUser} against a root filesystem's /etc/passwd and /etc/group, read through
 * {@link Beneath}: a container controls them, so nothing is followed and nothing waits. A missing
 * file (or a missing /etc, or one that is not a directory) is empty, as runc has it; a link on
 * the way (an /etc that is a link included), a FIFO, a device or a file over 1 MiB is refused
 * with a 400 naming the file, never followed or waited on. The empty `User` is root and reads
 * nothing; the group file is read only when a group is named.
 */
export async function resolveUserIn(rootfs: string, spec: string): Promise<ResolvedUser> {
  if (spec === '') return resolveUser(spec, '', '');
  let root: Beneath;
  try {
    root = await Beneath.open(rootfs);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return resolveUser(spec, '', '');
    throw error;
  }
  try {
    const passwd = await accountFile(root, '/etc/passwd', spec);
    const group = (spec.split(':', 2)[1] ?? '') !== '' ? await accountFile(root, '/etc/group', spec) : '';
    return resolveUser(spec, passwd, group);
  } finally {
    await root.close();
  }
}

/**
 * A build's `--chown` (`user[:group]`) as ids: from the passwd and group files under `rootfs`
 * ({@link resolveUserIn}), numbers only in a scratch image (no root filesystem).
 */
export async function resolveBuildUser(rootfs: string | undefined, spec: string): Promise<{ uid: number; gid: number }> {
  if (rootfs) return resolveUserIn(rootfs, spec);
  const [user = '', group] = spec.split(':');
  if (!/^\d+$/.test(user) || (group !== undefined && !/^\d+$/.test(group))) throw EngineError.invalidParameter(`unable to find user ${user}: no /etc/passwd in a scratch image (use numeric ids)`);
  return { uid: Number(user), gid: Number(group ?? user) };
}

/**
 * `HostConfig.GroupAdd` as gids, as runc resolves them for dockerd: a number is used as it is, a
 * name is looked up in the root filesystem's /etc/group (read as {@link resolveUserIn} reads it);
 * a name with no entry is refused with dockerd's words. Duplicates are kept once, in order.
 */
export async function resolveGroupsIn(rootfs: string, names: readonly string[]): Promise<number[]> {
  const out: number[] = [];
  const named = names.filter((n) => !/^\d+$/.test(n));
  let groups: Entry[] = [];
  if (named.length > 0) {
    const root = await Beneath.open(rootfs);
    try {
      groups = parseEntries(await accountFile(root, '/etc/group', `0:${named[0]!}`), 'group');
    } finally {
      await root.close();
    }
  }
  for (const name of names) {
    const gid = /^\d+$/.test(name) ? Number(name) : groups.find((g) => g.name === name)?.id;
    if (gid === undefined) throw EngineError.invalidParameter(`Unable to find group ${name}: no matching entries in group file`);
    if (gid > 0xfffffffe) throw EngineError.invalidParameter(`HostConfig.GroupAdd "${name}": gids must be below 2^32-1`);
    if (!out.includes(gid)) out.push(gid);
  }
  return out;
}

async function accountFile(root: Beneath, path: string, spec: string): Promise<string> {
  try {
    return (await root.readFile(path, MAX_ACCOUNT_FILE_BYTES))?.toString('utf8') ?? '';
  } catch (error) {
    if ((error instanceof BeneathError && error.code === 'ENOTDIR') || (error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    if (error instanceof BeneathError) {
      const why = error.code === 'ELOOP' ? 'it or /etc is a symbolic link, not followed' : error.code === 'ENOTREG' ? 'it is not a regular file' : error.code === 'EFBIG' ? `it is larger than ${MAX_ACCOUNT_FILE_BYTES} bytes` : error.message;
      throw EngineError.invalidParameter(`User "${spec}": cannot read the container's ${path}: ${why}`);
    }
    throw error;
  }
}

/** `name:password:id:…` lines; for passwd the 4th field is the gid and the 6th the home. Malformed lines are skipped, as getpwent does. */
function parseEntries(text: string, kind: 'passwd' | 'group'): Entry[] {
  const out: Entry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const f = line.split(':');
    const id = Number(f[2]);
    if (!f[0] || !/^\d+$/.test(f[2] ?? '')) continue;
    if (kind === 'passwd') {
      const gid = Number(f[3]);
      if (!/^\d+$/.test(f[3] ?? '')) continue;
      out.push({ name: f[0], id, gid, home: f[5] ?? '' });
    } else {
      out.push({ name: f[0], id, gid: id, home: '' });
    }
  }
  return out;
}
