import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { packEntry } from './pack-entry.js';
import type { LayerEntry, StoredLayer } from '../image-store-types.js';

export type { LayerEntry } from '../image-store-types.js';
import type { LayerFiles } from './layer-files.js';

/**
 * Writes a new layer from its entries, in order: the uncompressed tar goes into the store under
 * its diff ID (what the image config's `rootfs.diff_ids` lists). Its gzip form is made by the
 * first push that needs it and kept (layer-blobs.ts).
 *
 * @example
 * const layer = await writeLayer(store.files, entries());
 */
export async function writeLayer(files: LayerFiles, entries: AsyncIterable<LayerEntry> | Iterable<LayerEntry>): Promise<StoredLayer> {
  const archive = pack();
  const writing = (async () => {
    for await (const entry of entries) {
      await packEntry(archive, entry);
    }
    archive.finalize();
  })();
  writing.catch((err: Error) => archive.destroy(err));
  const layer = await files.importLayer(Readable.from(archive as AsyncIterable<Buffer>, { objectMode: false }));
  await writing;
  return layer;
}
