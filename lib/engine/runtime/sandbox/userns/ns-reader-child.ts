/**
 * Run by ns-reader.ts as the root of a rootless server's mapped user namespace (nsenter), never
 * imported: it reads a container's root filesystem copy where the server's own user may not (a
 * 0700 directory of container uid 1000 belongs to a host id of the range), with that root's
 * capabilities over the range's ids and the same walker as the server (`Beneath`: nothing
 * followed). Ids here are the namespace's: 0 is the server's user, n the range's n-th id; an
 * owner's block is `offset` further.
 *
 * - `layer ROOTFS OFFSET SIZE` (the changes as JSON on stdin): the layer of those changes as a
 *   tar on stdout (changes-layer.ts), owners as the container sees them;
 * - `diff IMAGE CONTAINER OFFSET`: the container's changes against the image's tree, as JSON on stdout (diff-trees.ts).
 */
import { pack } from 'tar-stream';
import { pipeline } from 'node:stream/promises';
import { changesLayer } from '../../../images/store/changes-layer.js';
import { diffTrees } from '../../local/diff-trees.js';
import { packEntry } from '../../../images/store/pack-entry.js';
import type { ContainerChange } from '../../../../engine-api/container-operations.js';

async function stdinText(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A namespace id as the container sees it: 0 stays root, the block's ids move back by `offset`; others are not the container's. */
function back(offset: number, size: number): (id: number) => number | undefined {
  return (id) => {
    if (id === 0) return 0;
    const n = id - offset;
    return n >= 1 && n < size ? n : undefined;
  };
}

async function layer(rootfs: string, offset: number, size: number): Promise<void> {
  const changes = JSON.parse(await stdinText()) as ContainerChange[];
  const to = back(offset, size);
  const archive = pack();
  const out = pipeline(archive, process.stdout);
  for await (const entry of changesLayer(rootfs, changes, { containerUid: to, containerGid: to })) {
    await packEntry(archive, entry);
  }
  archive.finalize();
  await out;
}

async function diff(image: string, container: string, offset: number): Promise<void> {
  const move = (id: number): number => (id === 0 ? 0 : id + offset);
  const changes = await diffTrees(image, container, offset === 0 ? undefined : (uid, gid) => ({ uid: move(uid), gid: move(gid) }));
  process.stdout.write(JSON.stringify(changes));
}

const [mode, ...args] = process.argv.slice(2);
try {
  if (mode === 'layer') await layer(args[0]!, Number(args[1]), Number(args[2]));
  else if (mode === 'diff') await diff(args[0]!, args[1]!, Number(args[2]));
  else throw new Error(`unknown mode ${String(mode)}`);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
}
