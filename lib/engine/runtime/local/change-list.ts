import type { ContainerChange } from '../../../engine-api/container-operations.js';
import type { Beneath } from '../../linux/beneath.js';

/** Entries compared at most, so a huge tree cannot hold the server (dockerd has no such bound). */
const MAX_ENTRIES = 500_000;
/**
 * Longest path walked into (Linux's PATH_MAX, what a path could reach before): each level holds
 * a directory descriptor while its entries are walked, so the depth bounds the descriptors held.
 */
const MAX_PATH = 4095;

/**
 * The changes a `docker diff` walker collects (diff-trees.ts for a copied root, overlay-changes.ts
 * for an overlay's upper layer), with the bound both keep: each entry compared counts, and past
 * {@link MAX_ENTRIES} the walk stops with an error.
 */
export class ChangeList {
  readonly changes: ContainerChange[] = [];
  #seen = 0;

  /** Counts one entry compared. */
  count(): void {
    if (++this.#seen > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} files to compare`);
  }

  push(Path: string, Kind: ContainerChange['Kind']): void {
    this.changes.push({ Path, Kind });
  }

  /** Lists everything below `here` (at `rel`) as added (1), depth first in sorted order: a directory the image did not have. */
  async addAll(rel: string, here: Beneath): Promise<void> {
    for (const name of (await here.list().catch(() => [])).sort()) {
      this.count();
      const path = `${rel}/${name}`;
      this.push(path, 1);
      if ((await here.lstatChild(name))?.isDirectory()) await within(here, name, path, (child) => this.addAll(path, child));
    }
  }
}

/**
 * Runs `body` in the directory `name` of `here` (at `path`), opened without following; when it
 * is no longer a directory (swapped for a link or removed since its lstat), or lies deeper than
 * PATH_MAX, there is nothing in it to list.
 */
export async function within(here: Beneath, name: string, path: string, body: (child: Beneath) => Promise<void>): Promise<void> {
  if (path.length <= MAX_PATH) await here.within(name, body);
}
