import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureEtc, mountPoint } from '../network/container-network.js';
import { writeEtcFiles } from '../network/etc-files.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/**
 * Its /etc/hostname, /etc/hosts and /etc/resolv.conf are bound over the root (bwrap stage),
 * in every network mode as dockerd makes them (network/etc-files.ts), owned by the container's
 * root: an image without /etc gets one of container root's own, or bwrap would make it as host
 * root, read-only to the container. A link at /etc is refused here, before anything is prepared
 * to undo. `--network container:REF`: the container reads the same three files as the one it
 * joins, as with dockerd.
 */
export const etc: Stage<StartContext> = {
  name: 'etc',
  async run(ctx) {
    const { userns, joined, rootfs } = ctx;
    const owner = userns ? { uid: userns.map.uid, gid: userns.map.gid } : undefined;
    await ensureEtc(rootfs, owner ?? {});
    ctx.joinedFiles = joined ? await sharedNetworkFiles(join(ctx.host.containersDir, joined.id), rootfs, owner) : undefined;
    ctx.etcFiles = joined ? undefined : await writeEtcFiles(ctx.run.id, ctx.run.spec, join(ctx.host.containersDir, ctx.run.id), rootfs, owner);
  },
};

/** The network files of the container whose namespace another joins (`container:ID`), to bind in its root too. */
async function sharedNetworkFiles(targetDir: string, rootfs: string, owner?: { uid: number; gid: number }): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of ['resolv.conf', 'hosts', 'hostname']) {
    const file = join(targetDir, name);
    if (existsSync(file) && await mountPoint(rootfs, `/etc/${name}`, owner)) files[`/etc/${name}`] = file;
  }
  return files;
}
