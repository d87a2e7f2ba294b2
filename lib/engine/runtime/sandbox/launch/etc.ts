import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureEtc, mountPoint, ownsNetwork } from '../network/container-network.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/**
 * Its /etc/hosts and /etc/resolv.conf are bound over the root (bwrap stage): an image without
 * /etc gets one of container root's own, or bwrap would make it as host root, read-only to the
 * container. A link at /etc is refused here, before anything is prepared to undo.
 * `--network container:REF`: the container reads the same /etc/resolv.conf and /etc/hosts as
 * the one it joins, as with dockerd.
 */
export const etc: Stage<StartContext> = {
  name: 'etc',
  async run(ctx) {
    const { userns, joined, rootfs } = ctx;
    if (ownsNetwork(ctx.run.spec) || joined) await ensureEtc(rootfs, userns ? { uid: userns.map.uid, gid: userns.map.gid } : {});
    ctx.joinedFiles = joined ? await sharedNetworkFiles(join(ctx.host.containersDir, joined.id), rootfs) : undefined;
  },
};

/** The network files of the container whose namespace another joins (`container:ID`), to bind in its root too. */
async function sharedNetworkFiles(targetDir: string, rootfs: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of ['resolv.conf', 'hosts']) {
    const file = join(targetDir, name);
    if (existsSync(file) && await mountPoint(rootfs, `/etc/${name}`)) files[`/etc/${name}`] = file;
  }
  return files;
}
