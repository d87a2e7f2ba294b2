import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { link, lstat, open, readlink } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { extract, type Header as Headers } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { IdShift, OwnerTable } from '../image-store-types.js';
import { Beneath } from '../../linux/beneath.js';

/** OCI image-spec layer.md: `.wh.<name>` hides `<name>` of lower layers. */
const WHITEOUT_PREFIX = '.wh.';
/** OCI image-spec layer.md: `.wh..wh..opq` in a directory hides all its lower-layer children. */
const OPAQUE = '.wh..wh..opq';

/** Filesystem errors that are this server's trouble (a full disk), not the layer's. */
const SERVER_TROUBLE = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EMFILE', 'ENFILE', 'ENOMEM', 'EROFS']);

/** setuid and setgid, stripped from every file a layer brings. */
const SETID_BITS = 0o6000;

const badLayer = (message: string) => EngineError.invalidParameter(`invalid layer: ${message}`);

/** A tar member name as a clean path relative to the root, or undefined for the root itself. */
export function layerPath(name: string): string | undefined {
  // As dockerd's archive package: the name joined to the root must stay under it (a breakout is refused).
  const clean = posix.normalize(name.replace(/^\/+/, '')).replace(/\/$/, '');
  if (clean === '..' || clean.startsWith('../')) throw badLayer(`${name} leaves the root`);
  if (clean === '' || clean === '.') return undefined;
  return clean;
}

/**
 * The real path of `rel` inside `root`, following symbolic links in its parent directories the
 * way a chroot would (an absolute target is relative to `root`, `..` stops at `root`), so no
 * layer entry can write outside the root through a link an earlier entry planted.
 */
export async function resolveInRoot(root: string, rel: string): Promise<string> {
  const pending = rel.split('/').filter(Boolean);
  const done: string[] = [];
  let hops = 0;
  while (pending.length > 1) {
    const part = pending.shift() as string;
    if (part === '..') { done.pop(); continue; }
    if (part === '.') continue;
    const here = posix.join(root, ...done, part);
    let isLink = false;
    try {
      isLink = (await lstat(here)).isSymbolicLink();
    } catch {
      isLink = false;
    }
    if (!isLink) { done.push(part); continue; }
    if (++hops > 40) throw badLayer(`too many symbolic links under ${rel}`);
    const target = await readlink(here);
    if (target.startsWith('/')) done.length = 0;
    pending.unshift(...target.split('/').filter(Boolean));
  }
  return posix.join(root, ...done, ...pending);
}

/** Removes what lower layers put below the held directory `dir` (`rel` in the layer), keeping what this layer wrote; nothing followed. */
async function removeLowerChildren(dir: Beneath, rel: string, written: Set<string>): Promise<void> {
  for (const name of await dir.list()) {
    const childRel = `${rel}/${name}`;
    if (!written.has(childRel)) await dir.remove(name);
    else if ((await dir.lstatChild(name))?.isDirectory()) {
      const child = await dir.dir(name);
      try {
        await removeLowerChildren(child, childRel, written);
      } finally {
        await child.close();
      }
    }
  }
}

/** mknod(2) has no Node binding: `mkfifo` makes it, named through this process's descriptor of the held directory (not followed). */
function mkfifo(dir: Beneath, name: string, header: Headers): Promise<void> {
  const path = dir.at(name).replace(/^\/proc\/self\//, `/proc/${process.pid}/`);
  return new Promise((resolve, reject) => {
    const child = spawn('mkfifo', ['-m', '600', '--', path], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(badLayer(`cannot create FIFO ${header.name}`))));
  });
}

/** The owner an entry gets: as recorded (the store runs as root), moved into a user namespace's range when the root is prepared for one. */
function ownerOf(header: Headers, shift?: IdShift): { uid: number; gid: number } {
  const uid = header.uid ?? 0;
  const gid = header.gid ?? 0;
  if (shift && shift.size === 1 && (uid !== 0 || gid !== 0)) {
    throw EngineError.system(`the image's /${header.name} is owned by ${uid}:${gid}: a rootless server maps one id (container root), and files of other owners need the /etc/subuid and /etc/subgid range mapped (with newuidmap and newgidmap, from Debian's uidmap package)`);
  }
  if (shift && (uid >= shift.size || gid >= shift.size)) throw EngineError.system(`the image's /${header.name} is owned by ${uid}:${gid}, outside the user namespace's ids (0-${shift.size - 1})`);
  return { uid: uid + (shift?.uid ?? 0), gid: gid + (shift?.gid ?? 0) };
}

/**
 * Records the owner the image gives `path` (a rootless store with a mapped namespace: the file is
 * the server's user's for now, NamespaceOwners.apply gives it this owner once the root is
 * complete); an owner beyond the namespace's ids is refused, naming the file.
 */
function recordOwner(owners: { table: OwnerTable; size: number }, path: string, header: Headers): void {
  const uid = header.uid ?? 0;
  const gid = header.gid ?? 0;
  if (uid >= owners.size || gid >= owners.size) {
    throw EngineError.system(`the image's /${header.name} is owned by ${uid}:${gid}, outside the ids the rootless server maps (0-${owners.size - 1}: its user and the subordinate range of /etc/subuid and /etc/subgid)`);
  }
  if (uid === 0 && gid === 0) owners.table.delete(path);
  else owners.table.set(path, [uid, gid]);
}

/** Owner, mode (never setuid or setgid: the store is on a host filesystem without nosuid, see applyLayer) and times, set through a descriptor. */
async function setMetadata(handle: { chown(uid: number, gid: number): Promise<void>; chmod(mode: number): Promise<void>; utimes(a: Date, m: Date): Promise<void> }, header: Headers, shift?: IdShift): Promise<void> {
  const { uid, gid } = ownerOf(header, shift);
  await handle.chown(uid, gid).catch(() => undefined);
  if (header.mode !== undefined) await handle.chmod(header.mode & ~SETID_BITS & 0o7777);
  const mtime = header.mtime ?? new Date(0);
  await handle.utimes(mtime, mtime);
}

/** The same for a held directory. */
function dirMetadata(dir: Beneath, header: Headers, shift?: IdShift): Promise<void> {
  return setMetadata({ chown: (uid, gid) => dir.own({ uid, gid }), chmod: (mode) => dir.own({ mode }), utimes: (a, m) => dir.utimes(a, m) }, header, shift);
}

/** Metadata of the entry `name` of `dir` (a FIFO, say), through a descriptor opened without following or waiting. */
async function entryMetadata(dir: Beneath, name: string, header: Headers, shift?: IdShift): Promise<void> {
  const handle = await open(dir.at(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    await setMetadata(handle, header, shift);
  } finally {
    await handle.close();
  }
}

/**
 * Applies one uncompressed layer tar onto `root` (the directory holding the lower layers
 * already applied): regular files, directories, links and FIFOs as recorded, and the OCI
 * whiteouts (`.wh.<name>` removes `<name>`, `.wh..wh..opq` empties the directory of what lower
 * layers put there). The whiteout files themselves are never written. Entries that would leave
 * `root` (`..`, absolute link targets in parents) are refused.
 *
 * A layer is anyone's bytes (`docker load`, ADD of an archive), so it goes through beneath.ts's
 * rule: links in an entry's parents resolve inside `root` as a chroot would, then the parent is
 * walked and held without following anything; nothing at the entry's own name is followed
 * either (a file is created `O_EXCL` after what was there is removed, owners, modes and times
 * are set on the descriptor or with lchown/lutimes for links, a whiteout unlinks a link, and an
 * opaque directory that is a link hides nothing).
 *
 * The store lives on a host filesystem mounted without nosuid or nodev, so an image must not
 * plant anything a host user could use there: setuid and setgid bits are stripped, and
 * character and block devices are not made (skipped; the sandbox gives containers their devices
 * through bwrap's `--dev`, which also hides an image's /dev). Inside a sandbox nothing is lost:
 * bwrap sets no_new_privs, under which setuid bits never took effect.
 */
export async function applyLayer(rootPath: string, tar: Readable, shift?: IdShift, owners?: { table: OwnerTable; size: number }): Promise<void> {
  const written = new Set<string>();
  const opaque: string[] = [];
  const root = await Beneath.open(rootPath);
  const ex = extract();
  tar.on('error', (err) => ex.destroy(err));
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  /**
   * The directory `rel` of the layer, its links resolved inside the root as a chroot would
   * (dockerd applies layers in a chroot), then walked without following anything: the walk
   * refuses a link, so a tree changed between the two is a refusal, never a followed link.
   * Missing directories are made (root's, 0755) when `create`; undefined when missing otherwise.
   */
  const dirOf = async (rel: string, create: boolean): Promise<Beneath | undefined> => {
    if (rel === '') return root.dir('');
    const resolved = await root.resolve(rel);
    return root.dir(resolved, create ? { mode: 0o755 } : undefined).catch((error: unknown) => {
      if (!create && (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    });
  };
  async function handle(header: Headers, body: AsyncIterable<Buffer> & { resume(): unknown }): Promise<void> {
    const rel = layerPath(header.name);
    if (rel === undefined) {
      if (header.type === 'directory') await dirMetadata(root, header, shift);
      if (header.type === 'directory' && owners) recordOwner(owners, '', header);
      body.resume();
      return;
    }
    const base = posix.basename(rel);
    const parentRel = posix.dirname(rel) === '.' ? '' : posix.dirname(rel);
    if (base === OPAQUE) {
      opaque.push(parentRel);
      body.resume();
      return;
    }
    if (base.startsWith(WHITEOUT_PREFIX)) {
      const dir = await dirOf(parentRel, false);
      // The hidden entry itself goes (a link is unlinked, never followed); a missing parent hides nothing.
      if (dir) await dir.remove(base.slice(WHITEOUT_PREFIX.length)).finally(() => dir.close());
      body.resume();
      return;
    }
    const dir = (await dirOf(parentRel, true)) as Beneath;
    // The entry's path in the tree (its parents' links resolved, as dirOf walked them), for its recorded owner.
    if (owners && header.type !== 'character-device' && header.type !== 'block-device') {
      recordOwner(owners, parentRel === '' ? base : `${await root.resolve(parentRel)}/${base}`, header);
    }
    try {
      // Parents count as written too: an opaque marker must not remove what this layer put below them.
      for (let at = rel; at !== '.'; at = posix.dirname(at)) written.add(`/${at}`);
      const existing = await dir.lstatChild(base);
      // A directory over a directory merges; anything else replaces what the lower layer had (a link is removed, not followed).
      if (existing && !(existing.isDirectory() && header.type === 'directory')) await dir.remove(base);
      switch (header.type) {
        case 'file':
        case 'contiguous-file': {
          // O_EXCL: the name is new (what was there is gone), so nothing at it is followed.
          const file = await dir.create(base, 0o600);
          try {
            for await (const chunk of body) await file.write(chunk);
            await setMetadata(file, header, shift);
          } finally {
            await file.close();
          }
          break;
        }
        case 'directory': {
          const made = await dir.mkdir(base);
          try {
            await dirMetadata(made, header, shift);
          } finally {
            await made.close();
          }
          break;
        }
        case 'symlink': {
          await dir.symlink(header.linkname ?? '', base);
          const { uid, gid } = ownerOf(header, shift);
          await dir.lchown(base, uid, gid).catch(() => undefined);
          const mtime = header.mtime ?? new Date(0);
          await dir.lutimes(base, mtime, mtime).catch(() => undefined);
          break;
        }
        case 'link': {
          const target = layerPath(header.linkname ?? '');
          if (target === undefined) throw badLayer(`hard link ${header.name} has no target`);
          const from = await dirOf(posix.dirname(target) === '.' ? '' : posix.dirname(target), false).catch(() => undefined);
          try {
            // link(2) follows neither name: the target is the entry itself (a link is linked as a link), in a directory held open.
            if (!from) throw Object.assign(new Error('no such directory'), { code: 'ENOENT' });
            await link(from.at(posix.basename(target)), dir.at(base));
          } catch (err) {
            // A hard link names a file of this image (one an earlier entry or layer made): a target
            // that is not there (`/etc/shadow` of the host, say) is the layer's fault, not ours.
            throw badLayer(`hard link ${header.name} points to ${header.linkname ?? ''}, which is not a file of the image (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
          } finally {
            await from?.close();
          }
          break;
        }
        case 'character-device':
        case 'block-device':
          // Never made on the host (see applyLayer); a container's devices come from bwrap's /dev.
          break;
        case 'fifo':
          await mkfifo(dir, base, header);
          await entryMetadata(dir, base, header, shift);
          break;
        default:
          throw badLayer(`entry ${header.name} has unsupported type ${header.type ?? 'unknown'}`);
      }
    } finally {
      await dir.close();
    }
    body.resume();
  }
  try {
    for await (const entry of ex) {
      try {
        await handle(entry.header, entry as unknown as AsyncIterable<Buffer> & { resume(): unknown });
      } catch (err) {
        // What an entry asks for and the filesystem refuses (a file where its parent should be a
        // directory, say) is a bad layer, answered 400 naming the entry; the system's own message
        // is left out, as it names host paths.
        if (err instanceof EngineError || SERVER_TROUBLE.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
        throw badLayer(`entry ${entry.header.name} cannot be applied (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      }
    }
    for (const dirRel of opaque) {
      // An opaque directory that is a link (or gone) hides nothing: the link is never followed (dockerd's walk in its chroot does the same).
      const dir = dirRel === '' ? await root.dir('') : await root.dir(dirRel).catch(() => undefined);
      if (!dir) continue;
      try {
        await removeLowerChildren(dir, dirRel === '' ? '' : `/${dirRel}`, written);
      } finally {
        await dir.close();
      }
    }
  } finally {
    await root.close();
  }
}
