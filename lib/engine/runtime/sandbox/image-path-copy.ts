import { EngineError } from '../../../engine-api/engine-error.js';
import { Beneath } from '../../linux/beneath.js';
import { copyBeneath } from '../../linux/copy-beneath.js';

/**
 * Copies the directory `path` of the root filesystem `root` into the volume directory `into`
 * with owners, modes, times and links kept, `into` taking the directory's own owner and mode
 * (dockerd's copyExistingContents and copyOwnership). Nothing happens when the image has no
 * directory there, or when the volume is no longer empty.
 *
 * Both trees are a container's (beneath.ts's rule): `path` is resolved inside `root` as the
 * container would resolve it (an image's `/data -> /etc` names the image's /etc, never the
 * server's), and the volume may be mounted in another running container that plants links in
 * it while the copy runs, so every entry is created without following anything (copy-beneath.ts)
 * instead of by `cp -a` as root, which wrote through such a link.
 */
export async function copyImagePath(root: string, path: string, into: string): Promise<void> {
  const top = await Beneath.open(root);
  try {
    const rel = await top.resolve(path);
    const stat = await top.lstat(rel);
    if (!stat?.isDirectory()) return;
    const [from, to] = [await top.dir(rel), await Beneath.open(into)];
    try {
      if ((await to.list()).length > 0) return;
      await copyBeneath(from, to).catch((error: unknown) => {
        // Another container of the volume wrote in it meanwhile (a name taken, a link in the way): nothing was written through it.
        throw EngineError.conflict(`copying the image's ${path} into its volume failed: ${(error as Error).message}`);
      });
      await to.own({ uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o7777 });
    } finally {
      await Promise.all([from.close(), to.close()]);
    }
  } finally {
    await top.close();
  }
}
