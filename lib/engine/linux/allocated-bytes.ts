import type { Stats } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { Beneath } from './beneath.js';

/** Entries lstat'ed at once while a directory is walked (the threadpool's work, in small batches). */
const BATCH = 32;

/** A tree too large to measure: more entries, or deeper directories, than the count allows. */
export class TreeTooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TreeTooLargeError';
  }
}

/**
 * The state of one measure over several trees: inodes counted so far (a hard link counts once,
 * across all the trees of the measure), entries walked, and the bounds. Make a new one per measure.
 */
export class BlockCount {
  readonly seen = new Set<string>();
  entries = 0;
  constructor(readonly maxEntries: number, readonly maxDepth: number) {}

  /** The bytes `stat`'s inode takes on disk (st_blocks × 512), or 0 when it was counted already. */
  add(stat: Stats): number {
    if (++this.entries > this.maxEntries) throw new TreeTooLargeError(`more than ${this.maxEntries} files`);
    const inode = `${stat.dev}:${stat.ino}`;
    if (this.seen.has(inode)) return 0;
    this.seen.add(inode);
    return stat.blocks * 512;
  }
}

/**
 * Bytes the tree at `root` takes on disk: the allocated blocks (st_blocks × 512) of every entry,
 * directories and the root included, each inode once per {@link BlockCount}. What a sparse file
 * does not hold costs nothing; what a written file holds counts even before it reaches the disk
 * (ext4 counts delayed allocations). A missing root takes 0.
 *
 * The tree is one a container writes to (its root filesystem copy, a volume), and may change
 * while it is walked: it is walked through {@link Beneath}, from directories held open, each
 * child opened without following, so a directory swapped for a link is left out, never entered.
 * Only `fs/promises` calls: the event loop never waits on the tree. Descriptors held are bounded
 * by the depth, which is bounded by `count.maxDepth` ({@link TreeTooLargeError} beyond it, as
 * beyond `count.maxEntries`): a tree that cannot be measured is the caller's to refuse.
 *
 * @example
 * const bytes = await allocatedBytes('/state/volumes/data/_data', new BlockCount(1_000_000, 256));
 */
export async function allocatedBytes(root: string, count: BlockCount): Promise<number> {
  const tree = await Beneath.open(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!tree) return 0;
  try {
    return count.add(await tree.stat()) + await walk(tree, 1, count);
  } finally {
    await tree.close();
  }
}

/** The bytes of the entries below `dir` (at `depth`), subdirectories entered after their parent's entries are counted. */
async function walk(dir: Beneath, depth: number, count: BlockCount): Promise<number> {
  let total = 0;
  const subdirectories: string[] = [];
  const measure = async (names: string[]): Promise<void> => {
    const stats = await Promise.all(names.map((name) => dir.lstatChild(name).catch(() => undefined)));
    stats.forEach((stat, i) => {
      if (!stat) return;
      total += count.add(stat);
      if (stat.isDirectory()) subdirectories.push(names[i] as string);
    });
  };
  // Streamed, not read whole: a directory of millions of names reaches the entry bound first.
  let batch: string[] = [];
  const listing = await opendir(dir.self, { bufferSize: BATCH }).catch(() => undefined);
  if (listing) {
    for await (const entry of listing) {
      batch.push(entry.name);
      if (batch.length < BATCH) continue;
      await measure(batch);
      batch = [];
    }
  }
  await measure(batch);
  for (const name of subdirectories) {
    if (depth >= count.maxDepth) throw new TreeTooLargeError(`directories more than ${count.maxDepth} levels deep`);
    // Swapped for a link or removed since its lstat: nothing in it is this tree's.
    await dir.within(name, async (child) => {
      total += await walk(child, depth + 1, count);
    });
  }
  return total;
}
