import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pack, type Header as Headers } from 'tar-stream';
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
      const header = { uname: '', gname: '', ...entry.header } as Headers;
      await new Promise<void>((resolve, reject) => {
        const done = (err?: Error | null) => (err ? reject(err) : resolve());
        if (entry.body) archive.entry(header, entry.body, done);
        else if (entry.content) {
          const sink = archive.entry(header, done);
          pipeline(Readable.from(entry.content), sink).catch(reject);
        } else if (entry.source !== undefined) {
          const sink = archive.entry(header, done);
          pipeline(createReadStream(entry.source), sink).catch(reject);
        } else if (header.type === 'file') archive.entry(header, Buffer.alloc(0), done);
        else archive.entry(header, done);
      });
    }
    archive.finalize();
  })();
  writing.catch((err: Error) => archive.destroy(err));
  const layer = await files.importLayer(Readable.from(archive as AsyncIterable<Buffer>, { objectMode: false }));
  await writing;
  return layer;
}
