import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Header as Headers, Pack } from 'tar-stream';
import type { LayerEntry } from '../image-store-types.js';

/**
 * Adds `entry` to the tar `archive`, its content streamed (from memory, its descriptor's reads or
 * its file), never gathered whole: a layer's file may be gigabytes. Resolves once the entry is
 * written, so entries go in one at a time, in order.
 */
export function packEntry(archive: Pack, entry: LayerEntry): Promise<void> {
  const header = { uname: '', gname: '', ...entry.header } as Headers;
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error | null): void => (err ? reject(err) : resolve());
    if (entry.body) archive.entry(header, entry.body, done);
    else if (entry.content) pipeline(Readable.from(entry.content), archive.entry(header, done)).catch(reject);
    else if (entry.source !== undefined) pipeline(createReadStream(entry.source), archive.entry(header, done)).catch(reject);
    else if (header.type === 'file') archive.entry(header, Buffer.alloc(0), done);
    else archive.entry(header, done);
  });
}
