import { spawn } from 'node:child_process';
import { chmod, lchown, lstat, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { IdShift } from '../image-store-types.js';

/** The directory of an image's root filesystems shifted by `shift` (dockerd's `<uid>.<gid>` of userns-remap). */
export function shiftedDir(storeDir: string, shift: IdShift): string {
  return join(storeDir, `rootfs-${shift.uid}.${shift.gid}`);
}

/**
 * Mount options of an overlay whose layers hold metadata-only copies (a shifted layer, below):
 * metacopy needs directory redirects on; no inode index.
 */
export const METACOPY_OPTIONS = 'metacopy=on,redirect_dir=on,index=off';

/**
 * The image's root filesystem with every owner moved into a user namespace's host range (uid n
 * becomes `shift.uid + n`, gid likewise), built once per image and range next to the plain one,
 * and shared by every container of the image and range.
 *
 * With `layer` (a root server, overlayfs): an overlay layer to stack on the plain tree
 * (`lowerdir=target:plain`, {@link METACOPY_OPTIONS}), made by mounting an overlay of the plain
 * tree with metadata-only copy-up and changing every owner through it: each entry of the layer is
 * a copy of the plain one's metadata whose data stays in the plain tree (a 300 MB image: some
 * 12 MB of inodes and a few hundred ms, not a 300 MB copy). Hard links of the plain tree are
 * separate entries in the range's view. Without `layer`, or when the mount fails: a whole copy
 * (`cp -a --reflink=auto`), complete on its own (stacked on the plain tree, it hides it entirely).
 *
 * Either way each owner is set from the plain tree's; chown clears the setuid and setgid bits,
 * which are put back as the layer had them. An owner beyond the range (an id the namespace cannot
 * hold) is refused, naming the file.
 */
export async function buildShiftedRootfs(plain: string, target: string, shift: IdShift, options: { layer?: boolean } = {}): Promise<string> {
  if (await stat(target).catch(() => undefined)) return target;
  await mkdir(dirname(target), { recursive: true, mode: 0o700 });
  const temp = await mkdtemp(join(dirname(target), '.tmp-'));
  try {
    const made = (options.layer ? await shiftedLayer(plain, temp, shift) : undefined) ?? await shiftedCopy(plain, temp, shift);
    await rename(made, target).catch(async (err: NodeJS.ErrnoException) => {
      // Another start of the same image finished first: its copy is the same.
      if (!(await stat(target).catch(() => undefined))) throw err;
    });
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return target;
}

async function shiftedCopy(plain: string, temp: string, shift: IdShift): Promise<string> {
  const copy = join(temp, 'rootfs');
  await copyTree(plain, copy);
  if (!(await shiftByOwner(plain, copy, shift))) await shiftTree(plain, copy, shift, '');
  return copy;
}

/** The layer in `temp/upper`, or undefined when the overlay cannot be mounted here (then a copy is made). */
async function shiftedLayer(plain: string, temp: string, shift: IdShift): Promise<string | undefined> {
  const [upper, work, merged] = ['upper', 'work', 'merged'].map((name) => join(temp, name)) as [string, string, string];
  for (const dir of [upper, work, merged]) await mkdir(dir, { mode: 0o755 });
  // The view's root takes the layer's mode: the plain root's.
  await chmod(upper, (await stat(plain)).mode & 0o7777);
  if (/[,:\\\s]/.test(plain + temp)) return undefined;
  const mounted = await output('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${plain},upperdir=${upper},workdir=${work},${METACOPY_OPTIONS}`, '--', merged])
    .then(() => true, () => false);
  if (!mounted) return undefined;
  try {
    if (!(await shiftByOwner(plain, merged, shift))) await shiftTree(plain, merged, shift, '');
  } finally {
    await output('umount', ['--', merged]).catch(() => output('umount', ['-l', '--', merged]));
  }
  return upper;
}

/**
 * The shift done in C (findutils' find, coreutils' chown) instead of one lchown per entry from here (a
 * 3,000-file image: 30 ms instead of a second): the distinct owners of the unpacked root, listed
 * by `find -printf`, each moved by one `chown -hR --from=UID:GID` over the copy (links not
 * followed, -R never crosses a link), then the setuid and setgid bits put back. Only when the
 * shifted ids cannot be mistaken for unshifted ones (the range starts at or above its size);
 * answers false, shifting nothing, when it cannot be used (then the walk below does it and names
 * an owner beyond the range).
 */
async function shiftByOwner(plain: string, copy: string, shift: IdShift): Promise<boolean> {
  if (shift.uid < shift.size || shift.gid < shift.size) return false;
  const owners = new Set((await output('find', [plain, '-printf', '%U:%G\\n'])).split('\n').filter((l) => l !== ''));
  const pairs = [...owners].map((o) => o.split(':').map(Number) as [number, number]);
  if (pairs.some(([uid, gid]) => !(uid < shift.size && gid < shift.size))) return false;
  for (const [uid, gid] of pairs) await output('chown', ['-hR', `--from=${uid}:${gid}`, `${shift.uid + uid}:${shift.gid + gid}`, '--', copy]);
  // chown cleared them; find lists each with its mode, never a link (whose mode means nothing).
  const special = (await output('find', [plain, '-perm', '/6000', '!', '-type', 'l', '-printf', '%m %P\\0'])).split('\0').filter((l) => l !== '');
  for (const entry of special) {
    const space = entry.indexOf(' ');
    await chmod(join(copy, entry.slice(space + 1)), parseInt(entry.slice(0, space), 8));
  }
  return true;
}

function output(file: string, args: string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(EngineError.system(`shifting the image's owners failed: ${file}: ${err.trim()}`))));
  });
}

async function shiftTree(plain: string, copy: string, shift: IdShift, relative: string): Promise<void> {
  const info = await lstat(join(plain, relative));
  if (info.uid >= shift.size || info.gid >= shift.size) {
    throw EngineError.system(`the image's /${relative} is owned by ${info.uid}:${info.gid}, outside the user namespace's ids (0-${shift.size - 1})`);
  }
  const path = join(copy, relative);
  await lchown(path, shift.uid + info.uid, shift.gid + info.gid);
  if (!info.isSymbolicLink() && (info.mode & 0o6000) !== 0) await chmod(path, info.mode & 0o7777);
  if (!info.isDirectory()) return;
  for (const name of await readdir(join(plain, relative))) await shiftTree(plain, copy, shift, join(relative, name));
}

function copyTree(source: string, dest: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn('cp', ['-a', '--reflink=auto', '--', source, dest], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(EngineError.system(`copying the image's root filesystem failed: ${err.trim()}`))));
  });
}
