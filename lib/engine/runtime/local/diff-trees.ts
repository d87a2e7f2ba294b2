import { lstat, readdir, readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import type { ContainerChange } from '../../../engine-api/container-operations.js';
import { Beneath } from '../../linux/beneath.js';

/** Entries compared at most, so a huge tree cannot hold the server (dockerd has no such bound). */
const MAX_ENTRIES = 500_000;
/**
 * Longest path walked into (Linux's PATH_MAX, what a path could reach before): each level holds
 * a directory descriptor while its entries are walked, so the depth bounds the descriptors held.
 */
const MAX_PATH = 4095;

/**
 * `docker diff` of a container root filesystem copy against its image's: a path only in the
 * container is added (1), only in the image deleted (2, its children not listed, as dockerd's
 * changes), in both with another type, size, mode, owner, mtime or link target modified (0) — a
 * directory whose entries changed has a new mtime and shows as modified, as in dockerd. Nothing is
 * followed or read but directory entries, lstat and link targets. Sorted by path.
 *
 * The container's side is walked through {@link Beneath}, from directories held open, since a
 * running container swaps a directory for a link while we walk: a directory is entered only
 * through the descriptor opened on it without following, so what a link names is never listed.
 * The image's side is the server's own unpacked image.
 *
 * @example
 * await diffTrees('/store/rootfs/abc', '/containers/x/rootfs'); // [{ Path: '/tmp', Kind: 0 }, { Path: '/tmp/new', Kind: 1 }]
 */
export async function diffTrees(image: string, container: string, owner?: (uid: number, gid: number) => { uid: number; gid: number }): Promise<ContainerChange[]> {
  const out: ContainerChange[] = [];
  let seen = 0;
  const count = (): void => {
    if (++seen > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} files to compare`);
  };
  async function walk(rel: string, here: Beneath | undefined): Promise<void> {
    const [inImage, inContainer] = await Promise.all([list(join(image, rel)), here ? here.list().catch(() => []) : []]);
    for (const name of [...new Set([...inImage, ...inContainer])].sort()) {
      count();
      const path = `${rel}/${name}`;
      const [a, b] = await Promise.all([lstat(join(image, path)).catch(() => undefined), here ? here.lstatChild(name) : undefined]);
      if (!b) {
        if (a) out.push({ Path: path, Kind: 2 });
        continue;
      }
      if (!a) {
        out.push({ Path: path, Kind: 1 });
        if (b.isDirectory()) await within(here!, name, path, (child) => addAll(path, child));
        continue;
      }
      if (await differs(a, b, join(image, path), here!, name, owner)) out.push({ Path: path, Kind: 0 });
      if (a.isDirectory() && b.isDirectory()) await within(here!, name, path, (child) => walk(path, child));
      else if (b.isDirectory()) await within(here!, name, path, (child) => addAll(path, child));
    }
  }
  async function addAll(rel: string, here: Beneath): Promise<void> {
    for (const name of (await here.list().catch(() => [])).sort()) {
      count();
      const path = `${rel}/${name}`;
      out.push({ Path: path, Kind: 1 });
      if ((await here.lstatChild(name))?.isDirectory()) await within(here, name, path, (child) => addAll(path, child));
    }
  }
  // A root that is gone (the container removed meanwhile) lists as empty, as a missing directory did.
  const root = await Beneath.open(container).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  try {
    await walk('', root);
  } finally {
    await root?.close();
  }
  return out;
}

/**
 * Runs `body` in the directory `name` of `here` (at `path`), opened without following; when it
 * is no longer a directory (swapped for a link or removed since its lstat), or lies deeper than
 * PATH_MAX, there is nothing in it to list.
 */
async function within(here: Beneath, name: string, path: string, body: (child: Beneath) => Promise<void>): Promise<void> {
  if (path.length <= MAX_PATH) await here.within(name, body);
}

async function list(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/** `owner`: the owner a copy of the image's entry has (a rootless owner's copy, moved into its block); none: the same. */
async function differs(a: Stats, b: Stats, pathA: string, dirB: Beneath, nameB: string, owner?: (uid: number, gid: number) => { uid: number; gid: number }): Promise<boolean> {
  const want = owner ? owner(a.uid, a.gid) : a;
  if ((a.mode & 0o170000) !== (b.mode & 0o170000) || a.mode !== b.mode || want.uid !== b.uid || want.gid !== b.gid) return true;
  if (a.isSymbolicLink()) return (await readlink(pathA).catch(() => '')) !== (await dirB.readlink(nameB).catch(() => ''));
  if (a.isDirectory()) return a.mtimeMs !== b.mtimeMs;
  return a.size !== b.size || a.mtimeMs !== b.mtimeMs;
}

/**
 * Bytes a container's changes take (its `SizeRw`, what prune reclaims): the sizes of the added
 * and modified entries that are not directories, each inode once — as dockerd sums its
 * writable layer (pkg/directory Size: directories and empty files count nothing, hard links once).
 * Each path is looked up through {@link Beneath}: a link on the way counts nothing.
 *
 * @example
 * await sizeOfChanges('/containers/x/rootfs', [{ Path: '/data/f', Kind: 1 }]); // 307200
 */
export async function sizeOfChanges(root: string, changes: readonly ContainerChange[]): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const tree = await Beneath.open(root).catch(() => undefined);
  if (!tree) return 0;
  try {
    for (const change of changes) {
      if (change.Kind === 2) continue;
      const stat = await tree.lstat(change.Path).catch(() => undefined);
      if (!stat || stat.isDirectory() || stat.size === 0) continue;
      const inode = `${stat.dev}:${stat.ino}`;
      if (seen.has(inode)) continue;
      seen.add(inode);
      total += stat.size;
    }
  } finally {
    await tree.close();
  }
  return total;
}
