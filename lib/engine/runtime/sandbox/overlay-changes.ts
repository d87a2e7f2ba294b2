import type { Stats } from 'node:fs';
import type { ContainerChange } from '../../../engine-api/container-operations.js';
import { Beneath } from '../../linux/beneath.js';
import { ChangeList, within } from '../local/change-list.js';

/** The three views of one directory: the container's writes, the mounted overlay and the image's. */
interface Level { upper: Beneath; merged: Beneath; lower: Beneath | undefined }

/**
 * `docker diff` of an overlay root (overlay-rootfs.ts) from its upper layer, as dockerd's
 * overlay2 does: only what the container wrote is walked, never the whole image. Each name in
 * the upper layer is compared with the image's (the plain tree, the lowest layer, its owners moved
 * by `shift`: what the range's layer above it holds): in the mounted view but not in
 * the image, added (1); in both, modified (0) when type, mode, owner, size, mtime or link target
 * differ (a directory that gained or lost entries has a new mtime, as in dockerd); in the image but
 * no longer in the view, deleted (2, its children not listed). That last covers both of
 * overlayfs's deletions: a whiteout (a 0/0 character device in the upper layer) and an opaque
 * directory (xattr `trusted.overlay.opaque`, a directory made again where one was removed, which
 * hides every image entry below it): the image's names missing from the view of a directory the
 * container wrote in are deleted. Sorted by path as a depth-first walk of sorted names.
 *
 * All three trees are walked through {@link Beneath} (the container's and the image's content are
 * a caller's: nothing is followed), each directory entered through the descriptor opened on it.
 */
export async function overlayChanges(lower: string, upper: string, merged: string, shift?: { uid: number; gid: number }): Promise<ContainerChange[]> {
  const [uid, gid] = [shift?.uid ?? 0, shift?.gid ?? 0];
  const out = new ChangeList();
  async function walk(rel: string, at: Level): Promise<void> {
    const [written, inView, inImage] = await Promise.all([at.upper.list(), at.merged.list(), at.lower ? at.lower.list() : []]);
    const view = new Set(inView);
    const deleted = new Set(inImage.filter((name) => !view.has(name)));
    for (const name of [...new Set([...written, ...deleted])].sort()) {
      out.count();
      const path = `${rel}/${name}`;
      if (deleted.has(name)) {
        out.push(path, 2);
        continue;
      }
      const [a, b] = await Promise.all([at.lower?.lstatChild(name), at.merged.lstatChild(name)]);
      if (!b) continue;
      if (!a) {
        out.push(path, 1);
        if (b.isDirectory()) await within(at.merged, name, path, (child) => out.addAll(path, child));
        continue;
      }
      if (await differs(a, b, at.lower!, at.merged, name, uid, gid)) out.push(path, 0);
      if (!b.isDirectory()) continue;
      if (!a.isDirectory()) {
        await within(at.merged, name, path, (child) => out.addAll(path, child));
        continue;
      }
      await within(at.upper, name, path, (u) => at.merged.within(name, (m) => at.lower!.within(name, (l) => walk(path, { upper: u, merged: m, lower: l }))));
    }
  }
  const roots = await Promise.all([upper, merged, lower].map((p) => Beneath.open(p)));
  try {
    await walk('', { upper: roots[0]!, merged: roots[1]!, lower: roots[2]! });
  } finally {
    await Promise.all(roots.map((r) => r.close()));
  }
  return out.changes;
}

async function differs(a: Stats, b: Stats, dirA: Beneath, dirB: Beneath, name: string, uid: number, gid: number): Promise<boolean> {
  if (a.mode !== b.mode || a.uid + uid !== b.uid || a.gid + gid !== b.gid) return true;
  if (a.isSymbolicLink()) return (await dirA.readlink(name).catch(() => '')) !== (await dirB.readlink(name).catch(() => ''));
  if (a.isDirectory()) return a.mtimeMs !== b.mtimeMs;
  return a.size !== b.size || a.mtimeMs !== b.mtimeMs;
}
