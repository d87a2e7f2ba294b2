import type { Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Header as Headers } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerChange } from '../../../engine-api/container-operations.js';
import { Beneath, isGone } from '../../linux/beneath.js';
import type { IdShift } from '../image-store-types.js';
import type { LayerEntry } from './layer-writer.js';

/** Bytes read from a file per step. */
const CHUNK = 1 << 16;

/**
 * The layer of a container's changes (`docker commit`, a build's RUN): every added or modified
 * path of the container's root filesystem as it is there, and for every deleted path an OCI
 * whiteout (`.wh.<name>`, image-spec layer.md). Owners are written as the container sees them: under a
 * user namespace (`shift`) the host ids are moved back by the range's start. A second name of an
 * inode already written becomes a hard link to the first. Sockets are left out, as Docker's
 * archiver does; device nodes are never in a sandbox's root filesystem (bwrap brings /dev).
 *
 * The root filesystem may belong to a running container (`docker commit --pause=false`) that
 * swaps a directory for a link meanwhile, so every path is looked up through {@link Beneath}:
 * nothing on the way or at the name is followed, and a path that is no longer what the list of
 * changes said (a link on the way, a file turned into a link) is left out. A file is opened
 * without following and non-blocking, checked regular, and its header (size, mode, owner) comes
 * from fstat of that descriptor, whose bytes are the entry's: exactly that size (cut when it grew
 * meanwhile, padded with zeros when it shrank), so the header always matches what follows it.
 *
 * @example
 * await writeLayer(files, blobFile, changesLayer(rootfs, await diffTrees(imageRoot, rootfs)));
 */
export async function* changesLayer(rootfs: string, changes: readonly ContainerChange[], shift?: IdShift | HostIdMapping): AsyncGenerator<LayerEntry> {
  const inodes = new Map<string, string>();
  // A container never started has no root filesystem copy yet, and no changes.
  const root = await Beneath.open(rootfs).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  try {
    for (const change of changes) {
      const rel = change.Path.replace(/^\/+/, '');
      if (change.Kind === 2) {
        const name = `${posix.dirname(rel) === '.' ? '' : `${posix.dirname(rel)}/`}.wh.${posix.basename(rel)}`;
        yield { header: { name, type: 'file', size: 0, mode: 0o644, uid: 0, gid: 0, mtime: new Date() } };
        continue;
      }
      const found = root ? await entryAt(root, rel) : undefined;
      if (!found) continue;
      const { info, linkname, file } = found;
      try {
        const header: Partial<Headers> & { name: string } = {
          name: info.isDirectory() ? `${rel}/` : rel,
          mode: info.mode & 0o7777,
          uid: toContainer(info.uid, shift, 'uid', rel),
          gid: toContainer(info.gid, shift, 'gid', rel),
          mtime: info.mtime,
        };
        if (info.isDirectory()) yield { header: { ...header, type: 'directory' } };
        else if (linkname !== undefined) yield { header: { ...header, type: 'symlink', linkname } };
        else if (info.isFIFO()) yield { header: { ...header, type: 'fifo' } };
        else if (file) {
          const inode = `${info.dev}:${info.ino}`;
          const first = info.nlink > 1 ? inodes.get(inode) : undefined;
          if (first !== undefined) {
            yield { header: { ...header, type: 'link', linkname: first } };
            continue;
          }
          if (info.nlink > 1) inodes.set(inode, rel);
          yield { header: { ...header, type: 'file', size: info.size }, content: exactly(file, info.size) };
        }
      } finally {
        await file?.close();
      }
    }
  } finally {
    await root?.close();
  }
}

/**
 * What is at `rel` now, looked up without following: its lstat (a regular file's fstat, with the
 * file open), a link's target; undefined when it is gone, a socket, or no longer reachable
 * without following a link.
 */
async function entryAt(root: Beneath, rel: string): Promise<{ info: Stats; linkname?: string; file?: FileHandle } | undefined> {
  const gone = (error: unknown): undefined => {
    if (isGone(error)) return undefined;
    throw error;
  };
  const parent = await root.parentOf(rel).catch(gone);
  if (!parent) return undefined;
  const { dir, name } = parent;
  try {
    const info = await dir.lstatChild(name);
    if (!info || info.isSocket()) return undefined;
    if (info.isSymbolicLink()) {
      // EINVAL: a link at the lstat, something else now.
      const linkname = await dir.readlink(name).catch((error: NodeJS.ErrnoException) => (error.code === 'EINVAL' ? undefined : gone(error)));
      return linkname === undefined ? undefined : { info, linkname };
    }
    if (!info.isFile()) return { info };
    const file = await dir.openFile(name).catch(gone);
    if (!file) return undefined;
    try {
      return { info: await file.stat(), file };
    } catch (error) {
      await file.close();
      throw error;
    }
  } finally {
    await dir.close();
  }
}

/** Exactly `size` bytes of the open `file` from its start: cut when it grew since its fstat, zeros after its end when it shrank. */
async function* exactly(file: FileHandle, size: number): AsyncGenerator<Buffer> {
  let offset = 0;
  while (offset < size) {
    const chunk = Buffer.alloc(Math.min(CHUNK, size - offset));
    const { bytesRead } = await file.read(chunk, 0, chunk.length, offset);
    offset += bytesRead === 0 ? chunk.length : bytesRead;
    yield bytesRead === 0 ? chunk : chunk.subarray(0, bytesRead);
  }
}

/** Host ids as a container sees them when they are not one offset away (a rootless server's map: its own ids are root, its subordinate range the others). */
export interface HostIdMapping {
  containerUid(host: number): number | undefined;
  containerGid(host: number): number | undefined;
}

function toContainer(id: number, shift: IdShift | HostIdMapping | undefined, kind: 'uid' | 'gid', rel: string): number {
  if (shift === undefined || !('containerUid' in shift)) return unshift(id, shift?.[kind], rel);
  const mapped = kind === 'uid' ? shift.containerUid(id) : shift.containerGid(id);
  if (mapped === undefined) throw EngineError.system(`/${rel} is owned by host ${kind} ${id}, outside the container's user namespace`);
  return mapped;
}

function unshift(id: number, base: number | undefined, rel: string): number {
  if (base === undefined) return id;
  // An id outside the container's range (nobody of the host) cannot be written as the container's.
  if (id < base) throw EngineError.system(`/${rel} is owned by host id ${id}, outside the container's user namespace`);
  return id - base;
}
