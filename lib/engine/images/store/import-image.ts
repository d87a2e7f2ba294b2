import type { Readable } from 'node:stream';
import type { ImageStoreCore } from '../store-core.js';
import { applyChanges } from './import-changes.js';
import { serverPlatform } from './platform.js';

/** What `docker import` gives the store: one layer's tar and how to describe the image. */
export interface ImageImportOptions {
  /** Familiar `name:tag` references to point at the image (none: untagged). */
  tags: string[];
  /** `--message`; without it dockerd writes `Imported from <source>`. */
  message?: string;
  /** Where the tar came from (`-` for the request body, or its URL), for that default comment. */
  source: string;
  /** `--change` lines (import-changes.ts). */
  changes: readonly string[];
}

/**
 * `docker import`: the tar (plain or gzip, capped like any layer) becomes the one layer of a
 * new image for this server's platform, its config built from the changes alone, with
 * dockerd's comment and a history entry without `created_by` (dockerd leaves it empty).
 * Answers the image ID. The changes are checked before a byte of the layer is read.
 */
export async function importImage(store: ImageStoreCore, tar: Readable, options: ImageImportOptions): Promise<string> {
  const runConfig = applyChanges({}, options.changes);
  const layer = await store.files.importLayer(tar);
  const created = new Date().toISOString();
  const comment = options.message !== undefined && options.message !== '' ? options.message : `Imported from ${options.source}`;
  const [os, architecture] = serverPlatform().split('/') as [string, string];
  const config = {
    architecture,
    comment,
    config: runConfig,
    created,
    history: [{ created, comment }],
    os,
    rootfs: { type: 'layers', diff_ids: [layer.diffId] },
  };
  const { id } = await store.commit({ config: Buffer.from(JSON.stringify(config)), layers: [layer], tags: options.tags });
  return id;
}
