import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { chmod, lchown, link, lstat, lutimes, mkdir, readdir, readlink, rm, symlink, utimes } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { extract, type Header as Headers } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { IdShift } from '../image-store-types.js';

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

async function removeLowerChildren(dir: string, rel: string, written: Set<string>): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const childRel = `${rel}/${name}`;
    if (!written.has(childRel)) await rm(posix.join(dir, name), { recursive: true, force: true });
    else if ((await lstat(posix.join(dir, name))).isDirectory()) await removeLowerChildren(posix.join(dir, name), childRel, written);
  }
}

/** Copies an entry's body into a new file, waiting for the disk when it is slower (back-pressure). */
async function writeBody(body: AsyncIterable<Buffer>, path: string): Promise<void> {
  const out = createWriteStream(path, { mode: 0o600 });
  try {
    for await (const chunk of body) if (!out.write(chunk)) await once(out, 'drain');
    out.end();
    await once(out, 'finish');
  } catch (err) {
    out.destroy();
    throw err;
  }
}

function mkfifo(path: string, header: Headers): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mkfifo', ['-m', ((header.mode ?? 0o644) & 0o777).toString(8), path], { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(badLayer(`cannot create FIFO ${header.name}`))));
  });
}

async function setMetadata(path: string, header: Headers, shift?: IdShift): Promise<void> {
  // Ownership as recorded: the store runs as root, and the sandbox maps these IDs as they are
  // (moved into a user namespace's range when the root is prepared for one).
  const uid = header.uid ?? 0;
  const gid = header.gid ?? 0;
  if (shift && (uid >= shift.size || gid >= shift.size)) throw EngineError.system(`the image's /${header.name} is owned by ${uid}:${gid}, outside the user namespace's ids (0-${shift.size - 1})`);
  await lchown(path, uid + (shift?.uid ?? 0), gid + (shift?.gid ?? 0)).catch(() => undefined);
  const mtime = header.mtime ?? new Date(0);
  if (header.type === 'symlink') {
    await lutimes(path, mtime, mtime).catch(() => undefined);
    return;
  }
  // Never setuid or setgid: the store is on a host filesystem without nosuid (see applyLayer).
  if (header.mode !== undefined) await chmod(path, header.mode & ~SETID_BITS & 0o7777);
  await utimes(path, mtime, mtime);
}

/**
 * Applies one uncompressed layer tar onto `root` (the directory holding the lower layers
 * already applied): regular files, directories, links and FIFOs as recorded, and the OCI
 * whiteouts (`.wh.<name>` removes `<name>`, `.wh..wh..opq` empties the directory of what lower
 * layers put there). The whiteout files themselves are never written. Entries that would leave
 * `root` (`..`, absolute link targets in parents) are refused.
 *
 * The store lives on a host filesystem mounted without nosuid or nodev, so an image must not
 * plant anything a host user could use there: setuid and setgid bits are stripped, and
 * character and block devices are not made (skipped; the sandbox gives containers their devices
 * through bwrap's `--dev`, which also hides an image's /dev). Inside a sandbox nothing is lost:
 * bwrap sets no_new_privs, under which setuid bits never took effect.
 */
export async function applyLayer(root: string, tar: Readable, shift?: IdShift): Promise<void> {
  const written = new Set<string>();
  const opaque: string[] = [];
  const ex = extract();
  tar.on('error', (err) => ex.destroy(err));
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  async function handle(header: Headers, body: AsyncIterable<Buffer> & { resume(): unknown }): Promise<void> {
    const rel = layerPath(header.name);
    if (rel === undefined) {
      if (header.type === 'directory') await setMetadata(root, header, shift);
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
      const hidden = posix.join(parentRel, base.slice(WHITEOUT_PREFIX.length));
      await rm(await resolveInRoot(root, hidden), { recursive: true, force: true });
      body.resume();
      return;
    }
    const path = await resolveInRoot(root, rel);
    await mkdir(posix.dirname(path), { recursive: true });
    // Parents count as written too: an opaque marker must not remove what this layer put below them.
    for (let at = rel; at !== '.'; at = posix.dirname(at)) written.add(`/${at}`);
    const existing = await lstat(path).catch(() => undefined);
    // A directory over a directory merges; anything else replaces what the lower layer had.
    if (existing && !(existing.isDirectory() && header.type === 'directory')) await rm(path, { recursive: true, force: true });
    switch (header.type) {
      case 'file':
      case 'contiguous-file':
        await writeBody(body, path);
        break;
      case 'directory':
        await mkdir(path, { recursive: true });
        break;
      case 'symlink':
        await symlink(header.linkname ?? '', path);
        break;
      case 'link': {
        const target = layerPath(header.linkname ?? '');
        if (target === undefined) throw badLayer(`hard link ${header.name} has no target`);
        try {
          await link(await resolveInRoot(root, target), path);
        } catch (err) {
          // A hard link names a file of this image (one an earlier entry or layer made): a target
          // that is not there (`/etc/shadow` of the host, say) is the layer's fault, not ours.
          throw badLayer(`hard link ${header.name} points to ${header.linkname ?? ''}, which is not a file of the image (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
        }
        break;
      }
      case 'character-device':
      case 'block-device':
        // Never made on the host (see applyLayer); a container's devices come from bwrap's /dev.
        body.resume();
        return;
      case 'fifo':
        await mkfifo(path, header);
        break;
      default:
        throw badLayer(`entry ${header.name} has unsupported type ${header.type ?? 'unknown'}`);
    }
    body.resume();
    if (header.type !== 'link') await setMetadata(path, header, shift);
  }
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
    const dir = dirRel === '' ? root : await resolveInRoot(root, dirRel);
    await removeLowerChildren(dir, dirRel === '' ? '' : `/${dirRel}`, written);
  }
}
