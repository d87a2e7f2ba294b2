import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { extract } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import { layerPath } from '../store/apply-layer.js';

/** An archive's regular files by member name, spooled to disk (archives name their index last). */
export class SpooledArchive {
  readonly #files = new Map<string, string>();
  readonly #links = new Map<string, string>();

  constructor(readonly dir: string) {}

  /** The spooled file for a member name, following the archive's own links (old `docker save` linked shared layers). */
  file(name: string): string | undefined {
    let key = layerPath(name);
    for (let hops = 0; key !== undefined && hops < 10; hops++) {
      const file = this.#files.get(key);
      if (file) return file;
      key = this.#links.get(key);
    }
    return undefined;
  }

  has(name: string): boolean {
    return this.file(name) !== undefined;
  }

  static async from(archive: Readable, dir: string): Promise<SpooledArchive> {
    const spooled = new SpooledArchive(dir);
    const ex = extract();
    archive.on('error', (err) => ex.destroy(err));
    archive.pipe(ex as unknown as NodeJS.WritableStream);
    let n = 0;
    try {
      for await (const entry of ex) {
        const { header } = entry;
        const name = layerPath(header.name);
        if (name !== undefined && (header.type === 'file' || header.type === 'contiguous-file')) {
          const file = posix.join(dir, String(n++));
          const out = createWriteStream(file);
          for await (const chunk of entry as AsyncIterable<Buffer>) if (!out.write(chunk)) await once(out, 'drain');
          out.end();
          await once(out, 'finish');
          spooled.#files.set(name, file);
        } else {
          if (name !== undefined && (header.type === 'symlink' || header.type === 'link') && header.linkname) {
            const target = header.type === 'symlink' ? posix.join(posix.dirname(name), header.linkname) : header.linkname;
            const resolved = layerPath(target);
            if (resolved !== undefined) spooled.#links.set(name, resolved);
          }
          entry.resume();
        }
      }
    } catch (err) {
      if (err instanceof EngineError) throw err;
      throw EngineError.invalidParameter(`invalid tar archive: ${(err as Error).message}`);
    }
    return spooled;
  }
}
