import { createWriteStream } from 'node:fs';
import { chmod, link, mkdir, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { extract, type Header as Headers } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import { layerPath, resolveInRoot } from '../../images/store/apply-layer.js';

/** Files up to this size are gathered and written in one call; larger ones are streamed to disk. */
const SMALL_FILE = 1024 * 1024;

/**
 * Unpacks a build context tar into `root`: directories, regular files (mode and mtime kept),
 * symbolic links and hard links; every path resolved inside `root` as a chroot would, so no
 * entry writes through a link out of it. Owners are not set (COPY writes root's or --chown's),
 * nor are device nodes or FIFOs made. Written for the builder rather than reusing the layer
 * applier: a context is not a layer (no whiteouts: a `.wh.x` file is just a file), and a
 * rebuild unpacks it every time, so it does the least a file needs (one write, one utimes).
 */
export async function extractContext(root: string, tar: Readable): Promise<void> {
  const ex = extract();
  tar.on('error', (err) => ex.destroy(err));
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  const dirs: [string, Date][] = [];
  const made = new Set<string>([root]);
  const seen = new Set<string>();
  // Until the context has a symbolic link, no path can lead through one: resolving is then a join.
  let links = false;
  const umask = process.umask();
  for await (const entry of ex) {
    const header = entry.header as Headers;
    const body = entry as unknown as AsyncIterable<Buffer> & { resume(): unknown };
    const rel = layerPath(header.name);
    if (rel === undefined) {
      body.resume();
      continue;
    }
    const path = links ? await resolveInRoot(root, rel) : posix.join(root, rel);
    const parent = posix.dirname(path);
    if (!made.has(parent)) {
      await mkdir(parent, { recursive: true });
      made.add(parent);
    }
    const mode = (header.mode ?? 0o644) & 0o777;
    const mtime = header.mtime ?? new Date(0);
    switch (header.type) {
      case 'directory':
        await mkdir(path, { recursive: true, mode });
        if ((mode & umask) !== 0) await chmod(path, mode);
        made.add(path);
        dirs.push([path, mtime]);
        body.resume();
        continue;
      case 'file':
      case 'contiguous-file':
        // A later entry of the same name replaces the earlier one (the tar's last word wins).
        if (seen.has(path)) await rm(path, { recursive: true, force: true });
        seen.add(path);
        if ((header.size ?? 0) <= SMALL_FILE) {
          const chunks: Buffer[] = [];
          for await (const chunk of body) chunks.push(chunk);
          await writeFile(path, Buffer.concat(chunks), { mode });
        } else {
          const out = createWriteStream(path, { mode });
          for await (const chunk of body) if (!out.write(chunk)) await once(out, 'drain');
          out.end();
          await once(out, 'finish');
        }
        if ((mode & umask) !== 0) await chmod(path, mode);
        await utimes(path, mtime, mtime);
        continue;
      case 'symlink':
        await rm(path, { recursive: true, force: true });
        await symlink(header.linkname ?? '', path);
        links = true;
        body.resume();
        continue;
      case 'link': {
        const target = layerPath(header.linkname ?? '');
        if (target === undefined) throw EngineError.invalidParameter(`hard link ${header.name} has no target`);
        await rm(path, { recursive: true, force: true });
        await link(await resolveInRoot(root, target), path);
        body.resume();
        continue;
      }
      default:
        // Devices and FIFOs have no place in a build context (dockerd's COPY copies neither usefully).
        body.resume();
    }
  }
  // Directory times last: writing their entries changed them.
  for (const [path, mtime] of dirs.reverse()) await utimes(path, mtime, mtime).catch(() => undefined);
}
