import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';

/** Who a container's process runs as, resolved against its image's /etc/passwd and /etc/group. */
export interface ResolvedUser {
  uid: number;
  gid: number;
  /** The passwd entry's home directory ("/" when the user has no entry), for HOME. */
  home: string;
}

interface Entry { name: string; id: number; gid: number; home: string }

/**
 * Resolves a `User` value (`name`, `uid`, `name:group`, `uid:gid`, any mix) the way runc does for
 * dockerd (libcontainer/user GetExecUser): the user is looked up in /etc/passwd by name or uid;
 * its entry gives the uid, the primary gid and the home directory. A numeric uid with no entry
 * runs as that uid with gid 0 and home "/". A group, when given, is looked up in /etc/group by
 * name or gid, and a numeric gid with no entry is used as it is. A name with no entry is refused
 * with dockerd's words (`unable to find user x: no matching entries in passwd file`), here at
 * create as a 400 naming User rather than at start.
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
    throw EngineError.invalidParameter(`User "${spec}": unable to find user ${userPart}: no matching entries in passwd file`);
  }
  const uid = entry?.id ?? (numericUser as number);
  let gid = entry?.gid ?? 0;
  if (groupPart !== undefined && groupPart !== '') {
    const groups = parseEntries(group, 'group');
    const numericGroup = /^\d+$/.test(groupPart) ? Number(groupPart) : undefined;
    const g = groups.find((e) => e.name === groupPart) ?? (numericGroup !== undefined ? groups.find((e) => e.id === numericGroup) : undefined);
    if (!g && numericGroup === undefined) {
      throw EngineError.invalidParameter(`User "${spec}": unable to find group ${groupPart}: no matching entries in group file`);
    }
    gid = g?.id ?? (numericGroup as number);
  }
  if (uid > 0xfffffffe || gid > 0xfffffffe) throw EngineError.invalidParameter(`User "${spec}": uids and gids must be below 2^32-1`);
  return { uid, gid, home: entry?.home || '/' };
}

/** {@link resolveUser} against a root filesystem's /etc/passwd and /etc/group (missing files are empty). */
export function resolveUserIn(rootfs: string, spec: string): ResolvedUser {
  return resolveUser(spec, readOrEmpty(join(rootfs, 'etc', 'passwd')), readOrEmpty(join(rootfs, 'etc', 'group')));
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
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
