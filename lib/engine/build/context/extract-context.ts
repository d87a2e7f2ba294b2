import { link } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { extract, type Header as Headers } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import { layerPath } from '../../images/store/apply-layer.js';
import { Beneath, BeneathError, components } from '../../linux/beneath.js';
import { acceptUnclosedTar } from './tar-end.js';

/** Directory handles kept open while a context unpacks (a context's entries come grouped by directory). */
const MAX_HELD = 64;

/**
 * Unpacks a build context tar into `root`: directories, regular files (mode and mtime kept),
 * symbolic links and hard links. The caller chose every name in it, so it goes through
 * beneath.ts's rule: each entry's directory is walked from `root` without following a link (an
 * entry below a link the tar made earlier is a 400, never written through it), a file is created
 * with `O_EXCL` after whatever was at its name is removed (a link there is removed, not
 * followed), and modes and times are set on the created descriptor. Owners are not set (COPY
 * writes root's or --chown's), nor are device nodes or FIFOs made. Written for the builder
 * rather than reusing the layer applier: a context is not a layer (no whiteouts: a `.wh.x` file
 * is just a file).
 */
export async function extractContext(root: string, tar: Readable): Promise<void> {
  // Opened before the tar flows: tar-stream's iterator sees only the entries that come after it is made.
  const top = await Beneath.open(root);
  const ex = extract();
  acceptUnclosedTar(ex);
  tar.on('error', (err) => ex.destroy(err));
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  const held = new Map<string, Beneath>();
  const dirs: [string, Date][] = [];
  // The root starts empty and nobody else writes in it: a name no earlier entry made needs no removal.
  const made = new Set<string>();
  const umask = process.umask();
  /** The directory `rel` (made when missing), walked once and then kept open while entries land in it. */
  const dirOf = async (rel: string): Promise<Beneath> => {
    if (rel === '') return top;
    const known = held.get(rel);
    if (known) return known;
    if (held.size >= MAX_HELD) await release('');
    const dir = await top.dir(rel, { mode: 0o755 });
    held.set(rel, dir);
    // Its missing parents were made on the way: names a later entry may replace.
    for (let i = rel.indexOf('/'); i !== -1; i = rel.indexOf('/', i + 1)) made.add(rel.slice(0, i));
    made.add(rel);
    return dir;
  };
  /** Closes the held handles at and below `rel` (all of them for ''): a later entry replaced that directory. */
  const release = async (rel: string): Promise<void> => {
    for (const [key, dir] of held) {
      if (rel === '' || key === rel || key.startsWith(`${rel}/`)) {
        held.delete(key);
        await dir.close();
      }
    }
  };
  try {
    for await (const entry of ex) {
      const header = entry.header as Headers;
      const body = entry as unknown as AsyncIterable<Buffer> & { resume(): unknown };
      const rel = layerPath(header.name);
      if (rel === undefined) {
        body.resume();
        continue;
      }
      try {
        await place(rel, header, body);
      } catch (error) {
        body.resume();
        throw refusal(header.name, error);
      }
    }
    // Directory times last: writing their entries changed them (a directory replaced meanwhile is skipped).
    await release('');
    for (const [rel, mtime] of dirs.reverse()) {
      const dir = await top.dir(rel).catch(() => undefined);
      await dir?.utimes(mtime, mtime).catch(() => undefined);
      await dir?.close();
    }
  } finally {
    await release('');
    await top.close();
  }

  async function place(rel: string, header: Headers, body: AsyncIterable<Buffer> & { resume(): unknown }): Promise<void> {
    const parts = components(rel);
    const name = parts.pop() as string;
    const parentRel = parts.join('/');
    const parent = await dirOf(parentRel);
    const mode = (header.mode ?? 0o644) & 0o777;
    const mtime = header.mtime ?? new Date(0);
    switch (header.type) {
      case 'directory': {
        const stat = made.has(rel) ? await parent.lstat(name) : undefined;
        if (stat && !stat.isDirectory()) await parent.remove(name);
        const dir = await parent.mkdir(name, { mode });
        await dir.own({ mode });
        await dir.close();
        made.add(rel);
        dirs.push([rel, mtime]);
        body.resume();
        return;
      }
      case 'file':
      case 'contiguous-file': {
        // A later entry of the same name replaces the earlier one (the tar's last word wins).
        if (made.has(rel)) {
          await release(rel);
          await parent.remove(name);
        }
        made.add(rel);
        const file = await parent.create(name, mode);
        try {
          for await (const chunk of body) await file.write(chunk);
          // The umask may have narrowed the mode create asked for.
          if ((mode & umask) !== 0) await file.chmod(mode);
          await file.utimes(mtime, mtime);
        } finally {
          await file.close();
        }
        return;
      }
      case 'symlink':
        if (made.has(rel)) {
          await release(rel);
          await parent.remove(name);
        }
        made.add(rel);
        await parent.symlink(header.linkname ?? '', name);
        body.resume();
        return;
      case 'link': {
        const target = layerPath(header.linkname ?? '');
        if (target === undefined) throw EngineError.invalidParameter(`hard link ${header.name} has no target`);
        const targetParts = components(target);
        const targetName = targetParts.pop() as string;
        const from = await top.dir(targetParts.join('/'));
        try {
          const stat = await from.lstat(targetName);
          if (!stat?.isFile()) throw EngineError.invalidParameter(`hard link ${header.name}: its target ${header.linkname} is not a file earlier in the context`);
          if (made.has(rel)) {
            await release(rel);
            await parent.remove(name);
          }
          made.add(rel);
          // link(2) follows neither name: the target is the entry itself, in the directory held open.
          await link(from.at(targetName), parent.at(name));
        } finally {
          await from.close();
        }
        body.resume();
        return;
      }
      default:
        // Devices and FIFOs have no place in a build context (dockerd's COPY copies neither usefully).
        body.resume();
    }
  }
}

/** What went wrong with one entry, as the client's error: a link in the way, a name that is not a directory, a missing target. */
function refusal(name: string, error: unknown): unknown {
  if (error instanceof EngineError) return error;
  if (error instanceof BeneathError) {
    return EngineError.invalidParameter(error.code === 'ELOOP' ? `${name}: the entry is below a symbolic link of the context (not followed)` : `${name}: ${error.message}`);
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOTDIR' || code === 'EEXIST' || code === 'ENOENT' || code === 'EISDIR' || code === 'ENAMETOOLONG' || code === 'ELOOP') {
    return EngineError.invalidParameter(`${name}: cannot be unpacked (${code})`);
  }
  return error;
}
