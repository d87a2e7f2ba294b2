import { readFileSync } from 'node:fs';

/**
 * The host ids a container's ids map onto: container uid `n` is host uid `uid + n` and container
 * gid `n` host gid `gid + n`, for `n` below `size`. Container root is an ordinary host uid.
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

/** The range when /etc/subuid has no `root` entry: 100000-165535, as useradd and podman use for the first user. */
export const DEFAULT_ID_MAP: IdMap = { uid: 100000, gid: 100000, size: MAP_SIZE };

/**
 * The range from /etc/subuid and /etc/subgid's entry for root (`root:START:COUNT`, or `0:…`), as
 * dockerd's `userns-remap` reads a user's subordinate ids; {@link DEFAULT_ID_MAP} when either file
 * has none. A range smaller than {@link MAP_SIZE} is used as it is (fewer container ids).
 */
export function subordinateIdMap(subuid = '/etc/subuid', subgid = '/etc/subgid'): IdMap {
  const uid = rootEntry(subuid);
  const gid = rootEntry(subgid);
  if (!uid || !gid) return DEFAULT_ID_MAP;
  return { uid: uid.start, gid: gid.start, size: Math.min(uid.count, gid.count, MAP_SIZE) };
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

/** Checks an `IdMap` given as an option; throws a TypeError naming `option`. */
export function checkIdMap(value: unknown, option: string): IdMap {
  const map = value as Partial<IdMap> | null;
  const ok = (n: unknown, min: number): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= min;
  if (typeof map !== 'object' || map === null || !ok(map.uid, 1) || !ok(map.gid, 1) || !ok(map.size, 1)
    || map.size > MAP_SIZE || map.uid + map.size > 0xffffffff || map.gid + map.size > 0xffffffff) {
    throw new TypeError(`sandboxRuntime option "${option}" must be { uid, gid, size } with host ids above 0 and a size of 1 to ${MAP_SIZE}`);
  }
  return { uid: map.uid, gid: map.gid, size: map.size };
}
