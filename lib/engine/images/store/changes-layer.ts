import { lstat, readlink } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Header as Headers } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerChange } from '../../../engine-api/container-operations.js';
import type { IdShift } from '../image-store-types.js';
import type { LayerEntry } from './layer-writer.js';

/**
 * The layer of a container's changes (`docker commit`, a build's RUN): every added or modified
 * path of the container's root filesystem as it is there, and for every deleted path an OCI
 * whiteout (`.wh.<name>`, image-spec layer.md). Owners are written as the container sees them: under a
 * user namespace (`shift`) the host ids are moved back by the range's start. A second name of an
 * inode already written becomes a hard link to the first. Sockets are left out, as Docker's
 * archiver does; device nodes are never in a sandbox's root filesystem (bwrap brings /dev).
 *
 * @example
 * await writeLayer(files, blobFile, changesLayer(rootfs, await diffTrees(imageRoot, rootfs)));
 */
export async function* changesLayer(rootfs: string, changes: readonly ContainerChange[], shift?: IdShift): AsyncGenerator<LayerEntry> {
  const inodes = new Map<string, string>();
  for (const change of changes) {
    const rel = change.Path.replace(/^\/+/, '');
    if (change.Kind === 2) {
      const name = `${posix.dirname(rel) === '.' ? '' : `${posix.dirname(rel)}/`}.wh.${posix.basename(rel)}`;
      yield { header: { name, type: 'file', size: 0, mode: 0o644, uid: 0, gid: 0, mtime: new Date() } };
      continue;
    }
    const path = posix.join(rootfs, rel);
    const info = await lstat(path).catch(() => undefined);
    if (!info || info.isSocket()) continue;
    const header: Partial<Headers> & { name: string } = {
      name: info.isDirectory() ? `${rel}/` : rel,
      mode: info.mode & 0o7777,
      uid: unshift(info.uid, shift?.uid, rel),
      gid: unshift(info.gid, shift?.gid, rel),
      mtime: info.mtime,
    };
    if (info.isDirectory()) yield { header: { ...header, type: 'directory' } };
    else if (info.isSymbolicLink()) yield { header: { ...header, type: 'symlink', linkname: await readlink(path) } };
    else if (info.isFIFO()) yield { header: { ...header, type: 'fifo' } };
    else if (info.isFile()) {
      const inode = `${info.dev}:${info.ino}`;
      const first = info.nlink > 1 ? inodes.get(inode) : undefined;
      if (first !== undefined) {
        yield { header: { ...header, type: 'link', linkname: first } };
        continue;
      }
      if (info.nlink > 1) inodes.set(inode, rel);
      yield { header: { ...header, type: 'file', size: info.size }, source: path };
    }
  }
}

function unshift(id: number, base: number | undefined, rel: string): number {
  if (base === undefined) return id;
  // An id outside the container's range (nobody of the host) cannot be written as the container's.
  if (id < base) throw EngineError.system(`/${rel} is owned by host id ${id}, outside the container's user namespace`);
  return id - base;
}
