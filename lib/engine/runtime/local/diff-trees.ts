import { lstat, readdir, readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import type { ContainerChange } from '../../../engine-api/container-operations.js';

/** Entries compared at most, so a huge tree cannot hold the server (dockerd has no such bound). */
const MAX_ENTRIES = 500_000;

/**
 * `docker diff` of a container root filesystem copy against its image's: a path only in the
 * container is added (1), only in the image deleted (2, its children not listed, as dockerd's
 * changes), in both with another type, size, mode, owner, mtime or link target modified (0) — a
 * directory whose entries changed has a new mtime and shows as modified, as in dockerd. Nothing is
 * followed or read but directory entries, lstat and link targets. Sorted by path.
 *
 * @example
 * await diffTrees('/store/rootfs/abc', '/containers/x/rootfs'); // [{ Path: '/tmp', Kind: 0 }, { Path: '/tmp/new', Kind: 1 }]
 */
export async function diffTrees(image: string, container: string): Promise<ContainerChange[]> {
  const out: ContainerChange[] = [];
  let seen = 0;
  async function walk(rel: string): Promise<void> {
    const [inImage, inContainer] = await Promise.all([list(join(image, rel)), list(join(container, rel))]);
    for (const name of [...new Set([...inImage, ...inContainer])].sort()) {
      if (++seen > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} files to compare`);
      const path = `${rel}/${name}`;
      const [a, b] = await Promise.all([lstat(join(image, path)).catch(() => undefined), lstat(join(container, path)).catch(() => undefined)]);
      if (!b) {
        if (a) out.push({ Path: path, Kind: 2 });
        continue;
      }
      if (!a) {
        out.push({ Path: path, Kind: 1 });
        if (b.isDirectory()) await addAll(path);
        continue;
      }
      if (await differs(a, b, join(image, path), join(container, path))) out.push({ Path: path, Kind: 0 });
      if (a.isDirectory() && b.isDirectory()) await walk(path);
      else if (b.isDirectory()) await addAll(path);
    }
  }
  async function addAll(rel: string): Promise<void> {
    for (const name of (await list(join(container, rel))).sort()) {
      if (++seen > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} files to compare`);
      const path = `${rel}/${name}`;
      out.push({ Path: path, Kind: 1 });
      if ((await lstat(join(container, path)).catch(() => undefined))?.isDirectory()) await addAll(path);
    }
  }
  await walk('');
  return out;
}

async function list(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

async function differs(a: Stats, b: Stats, pathA: string, pathB: string): Promise<boolean> {
  if ((a.mode & 0o170000) !== (b.mode & 0o170000) || a.mode !== b.mode || a.uid !== b.uid || a.gid !== b.gid) return true;
  if (a.isSymbolicLink()) return (await readlink(pathA).catch(() => '')) !== (await readlink(pathB).catch(() => ''));
  if (a.isDirectory()) return a.mtimeMs !== b.mtimeMs;
  return a.size !== b.size || a.mtimeMs !== b.mtimeMs;
}

/**
 * Bytes a container's changes take (its `SizeRw`, what prune reclaims): the sizes of the added
 * and modified entries that are not directories, each inode once — as dockerd sums its
 * writable layer (pkg/directory Size: directories and empty files count nothing, hard links once).
 *
 * @example
 * await sizeOfChanges('/containers/x/rootfs', [{ Path: '/data/f', Kind: 1 }]); // 307200
 */
export async function sizeOfChanges(root: string, changes: readonly ContainerChange[]): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  for (const change of changes) {
    if (change.Kind === 2) continue;
    const stat = await lstat(join(root, change.Path)).catch(() => undefined);
    if (!stat || stat.isDirectory() || stat.size === 0) continue;
    const inode = `${stat.dev}:${stat.ino}`;
    if (seen.has(inode)) continue;
    seen.add(inode);
    total += stat.size;
  }
  return total;
}
