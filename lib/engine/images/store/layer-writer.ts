import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack, type Header as Headers } from 'tar-stream';
import type { CompressedLayer, LayerEntry, StoredLayer } from '../image-store-types.js';

export type { CompressedLayer, LayerEntry } from '../image-store-types.js';
import { tempPathFor, writeFileAtomic } from '../../../fs/atomic-file.js';
import { digestHex, HashingStream } from './digest.js';
import type { LayerFiles } from './layer-files.js';

/**
 * Writes a new layer from its entries, in order: the uncompressed tar goes into the store under
 * its diff ID (what the image config's `rootfs.diff_ids` lists) and a gzip copy into
 * `blobs/sha256/<digest>`, with `layers/<diffhex>.gzip.json` recording that digest, so a push
 * uploads the layer without compressing it again.
 *
 * @example
 * const layer = await writeLayer(store.files, store.blobFile.bind(store), entries());
 */
export async function writeLayer(files: LayerFiles, blobFile: (digest: string) => string, entries: AsyncIterable<LayerEntry> | Iterable<LayerEntry>): Promise<StoredLayer & { compressed: CompressedLayer }> {
  const archive = pack();
  const writing = (async () => {
    for await (const entry of entries) {
      const header = { uname: '', gname: '', ...entry.header } as Headers;
      await new Promise<void>((resolve, reject) => {
        const done = (err?: Error | null) => (err ? reject(err) : resolve());
        if (entry.body) archive.entry(header, entry.body, done);
        else if (entry.source !== undefined) {
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
  return { ...layer, compressed: await compressLayer(files, blobFile, layer.diffId) };
}

/** The gzip form of a stored layer, made once and kept (see {@link writeLayer}). */
export async function compressLayer(files: LayerFiles, blobFile: (digest: string) => string, diffId: string): Promise<CompressedLayer> {
  const known = await compressedLayer(files, blobFile, diffId);
  if (known) return known;
  const dir = join(blobFile(diffId), '..');
  await mkdir(dir, { recursive: true });
  const temp = tempPathFor(join(dir, 'x'));
  const hasher = new HashingStream();
  try {
    // Level 1: the registry and clients accept any gzip, and the builder waits for this one.
    await pipeline(createReadStream(files.layerFile(diffId)), createGzip({ level: 1 }), hasher, createWriteStream(temp));
    const digest = hasher.digest();
    await rename(temp, blobFile(digest));
    await writeFileAtomic(gzipRecord(files, diffId), JSON.stringify({ digest, size: hasher.bytes }));
    return { digest, size: hasher.bytes, file: blobFile(digest) };
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

/** The kept gzip form of a layer, or undefined when it has none (a pulled layer keeps only its tar). */
export async function compressedLayer(files: LayerFiles, blobFile: (digest: string) => string, diffId: string): Promise<CompressedLayer | undefined> {
  try {
    const record = JSON.parse(await readFile(gzipRecord(files, diffId), 'utf8')) as { digest: string; size: number };
    return { digest: record.digest, size: record.size, file: blobFile(record.digest) };
  } catch {
    return undefined;
  }
}

function gzipRecord(files: LayerFiles, diffId: string): string {
  return join(files.layersDir, `${digestHex(diffId)}.gzip.json`);
}
