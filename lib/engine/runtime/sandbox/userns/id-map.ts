import { readFileSync } from 'node:fs';

/**
 * The host ids a container's ids map onto: container uid `n` is host uid `uid + n` and container
 * gid `n` host gid `gid + n`, for `n` below `size`. Container root is an ordinary host uid.
 * The server's whole subordinate range has the same shape (its `size` may hold many container ranges).
 */
export interface IdMap {
  /** Host uid of container uid 0. */
  uid: number;
  /** Host gid of container gid 0. */
  gid: number;
  /** How many ids are mapped (container ids 0 to size - 1). */
  size: number;
}

/** Ids a container may use: 0 to 65535, as Docker's userns-remap gives (65534 is nobody). */
export const MAP_SIZE = 65536;

/**
 * The server's range when /etc/subuid has no `root` entry: 100000-6653599, room for 100
 * container ranges of {@link MAP_SIZE} (the first is 100000-165535, as useradd and podman give
 * the first user). The server writes each namespace's map itself, as root, so no /etc/subuid
 * entry is needed for it.
 */
export const DEFAULT_ID_RANGE: IdMap = { uid: 100000, gid: 100000, size: 100 * MAP_SIZE };

/**
 * The server's whole subordinate range, from /etc/subuid and /etc/subgid's entry for root
 * (`root:START:COUNT`, or `0:…`), as dockerd's `userns-remap` reads a user's subordinate ids
 * (the smaller of the two counts); {@link DEFAULT_ID_RANGE} when either file has none. It is cut
 * into container ranges by {@link idMapAt}.
 */
export function subordinateIdRange(subuid = '/etc/subuid', subgid = '/etc/subgid'): IdMap {
  const uid = rootEntry(subuid);
  const gid = rootEntry(subgid);
  if (!uid || !gid) return DEFAULT_ID_RANGE;
  return { uid: uid.start, gid: gid.start, size: Math.min(uid.count, gid.count) };
}

/** How many container ranges of {@link MAP_SIZE} a server range holds (one at least: a smaller range is one with fewer ids). */
export function idMapCount(range: IdMap): number {
  return Math.max(1, Math.floor(range.size / MAP_SIZE));
}

/**
 * The `index`-th container range of the server's range: host ids `uid + index × 65536` on
 * (gid likewise), {@link MAP_SIZE} ids, or the whole range when it is smaller; undefined beyond
 * {@link idMapCount}.
 */
export function idMapAt(range: IdMap, index: number): IdMap | undefined {
  if (!Number.isSafeInteger(index) || index < 0 || index >= idMapCount(range)) return undefined;
  return { uid: range.uid + index * MAP_SIZE, gid: range.gid + index * MAP_SIZE, size: Math.min(range.size, MAP_SIZE) };
}

function rootEntry(file: string): { start: number; count: number } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const [name, start, count] = line.trim().split(':');
    if ((name === 'root' || name === '0') && /^\d+$/.test(start ?? '') && /^\d+$/.test(count ?? '') && Number(count) > 0) {
      return { start: Number(start), count: Number(count) };
    }
  }
  return undefined;
}

/** Checks the server's range given as an option (any size of 1 id or more within 32-bit host ids); throws a TypeError naming `option`. */
export function checkIdRange(value: unknown, option: string): IdMap {
  const map = value as Partial<IdMap> | null;
  const ok = (n: unknown, min: number): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= min;
  if (typeof map !== 'object' || map === null || !ok(map.uid, 1) || !ok(map.gid, 1) || !ok(map.size, 1)
    || map.uid + map.size > 0xffffffff || map.gid + map.size > 0xffffffff) {
    throw new TypeError(`sandboxRuntime option "${option}" must be { uid, gid, size } with host ids above 0 and below 2^32 - 1 (size: how many host ids; each owner's containers take ${MAP_SIZE})`);
  }
  return { uid: map.uid, gid: map.gid, size: map.size };
}
