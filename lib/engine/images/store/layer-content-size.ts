import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar-stream';
import { writeFileAtomic } from '../../../fs/atomic-file.js';

/**
 * What dockerd calls a layer's size (`docker history`'s SIZE, the layer store's DiffSize): the
 * bytes of the files it holds once unpacked, where a symlink counts the length of its target and
 * directories, whiteouts and hard links (the same inode again) count nothing. Not the tar's own
 * length, which adds headers and padding (the busybox layer: 1982340 content bytes, a 1996800-byte
 * tar). Read once from the tar and kept beside it in `cacheFile`.
 */
export async function layerContentSize(layerFile: string, cacheFile: string): Promise<number> {
  const text = (await readFile(cacheFile, 'utf8').catch(() => '')).trim();
  if (/^\d+$/.test(text)) return Number(text);
  let total = 0;
  const tar = extract();
  tar.on('entry', (header, stream, next) => {
    const base = header.name.slice(header.name.replace(/\/$/, '').lastIndexOf('/') + 1);
    if (!base.startsWith('.wh.')) {
      if (header.type === 'file' || header.type === 'contiguous-file') total += header.size ?? 0;
      else if (header.type === 'symlink') total += Buffer.byteLength(header.linkname ?? '');
    }
    stream.on('end', next);
    stream.resume();
  });
  await pipeline(createReadStream(layerFile), tar);
  await writeFileAtomic(cacheFile, String(total)).catch(() => undefined);
  return total;
}
