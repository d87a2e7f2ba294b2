/**
 * THE RULE: host code never follows a path that a container or a caller controls.
 *
 * A container's root filesystem, a volume, a build context and an unpacked archive are trees
 * whose names another party chooses, and may change while we look (a running container swaps a
 * directory for a symbolic link between two of our calls). The server runs as root, so one
 * followed link is a root write anywhere on the host. Every read, write, walk, chmod, chown and
 * copy of such a tree therefore happens either inside a sandbox as the container's mapped user
 * (`docker cp`, `docker export`), or through this module, which:
 *
 * - walks from a directory it holds open, one component at a time, each opened with
 *   `O_NOFOLLOW` (a link at any step, the last included, is refused, never followed);
 * - names a child of a held directory as `/proc/self/fd/N/name` — the kernel's `openat(2)`
 *   through procfs, since Node has no `openat`: the magic link pins the directory we opened, so
 *   a rename or swap of its path afterwards changes nothing;
 * - creates with `O_EXCL`, sets owners and modes on the descriptor it created (`fchown`,
 *   `fchmod`) or with `lchown` for links, and removes with `unlink`/`rmdir` (neither follows);
 * - opens files `O_NONBLOCK`, checks with `fstat` that they are regular files, and caps what it
 *   reads, so a FIFO or a device planted by a container cannot hold the event loop;
 * - uses only `fs/promises` (the threadpool): never blocking I/O on the event loop.
 *
 * `..` is refused rather than resolved: a caller that wants a container path resolved as the
 * container would resolve it does that inside the container's sandbox.
 */
import { constants, type Stats } from 'node:fs';
import { copyFile, lchown, lstat, lutimes, mkdir, open, readdir, readlink, rmdir, symlink, unlink, type FileHandle } from 'node:fs/promises';

const { O_RDONLY, O_WRONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_CREAT, O_EXCL } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
/** Entries of one directory removed at once (the threadpool has four threads by default; more keeps it fed without flooding it). */
const REMOVALS_IN_FLIGHT = 8;

/** Refused by this module: a link, a non-directory where a directory was needed, `..`, a file too large or not regular. */
export class BeneathError extends Error {
  readonly path: string;
  readonly code: 'ELOOP' | 'ENOTDIR' | 'EINVAL' | 'EFBIG' | 'ENOTREG' | 'ENOENT' | 'EEXIST';
  constructor(path: string, code: BeneathError['code'], message: string) {
    super(message);
    this.name = 'BeneathError';
    this.path = path;
    this.code = code;
  }
}

/** Whether an error says what a walk went to is no longer there as it was: refused by this module (a link, not a directory…) or removed. */
export function isGone(error: unknown): boolean {
  return error instanceof BeneathError || (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** The components of a path inside a tree (`/etc/passwd` and `etc/passwd` alike); `..` is refused. */
export function components(path: string): string[] {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw new BeneathError(path, 'EINVAL', `${path}: ".." is not followed`);
  if (parts.some((p) => p.includes('\0'))) throw new BeneathError(path, 'EINVAL', 'a path may not hold a NUL byte');
  return parts;
}

function refusal(error: unknown, path: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return new BeneathError(path, 'ELOOP', `${path} is a symbolic link: not followed`);
  if (code === 'ENOTDIR') return new BeneathError(path, 'ENOTDIR', `${path} is not a directory`);
  return error;
}

/** The owner and mode a created entry gets (owner unchanged when absent). */
export interface Ownership { uid?: number; gid?: number; mode?: number }

/**
 * A directory held open: every operation names a child of it, or a path below it walked without
 * following. Close it when done (children opened from it are independent handles).
 *
 * @example
 * const root = await Beneath.open(rootfs);
 * try {
 *   const passwd = await root.readFile('/etc/passwd', 1 << 20); // undefined when missing
 * } finally {
 *   await root.close();
 * }
 */
export class Beneath {
  private constructor(private readonly handle: FileHandle, readonly label: string) {}

  /** Opens a tree's root; the root's own path is the server's (a state directory it made), its last component still not followed. */
  static async open(root: string): Promise<Beneath> {
    try {
      return new Beneath(await open(root, DIR_FLAGS), root);
    } catch (error) {
      throw refusal(error, root);
    }
  }

  /**
   * Removes `name` in the server's directory `dir` with everything under it, nothing followed
   * (what a container wrote: its root filesystem, a volume); nothing there is fine.
   */
  static async removeIn(dir: string, name: string): Promise<void> {
    const top = await Beneath.open(dir);
    try {
      await top.remove(name);
    } finally {
      await top.close();
    }
  }

  /** O_DIRECTORY with O_NOFOLLOW says ENOTDIR for a link too: which of the two `name` is, as the refusal. */
  private async notADirectory(name: string, path: string): Promise<BeneathError> {
    const link = await lstat(this.at(name)).then((s) => s.isSymbolicLink(), () => false);
    return link ? new BeneathError(path, 'ELOOP', `${path}: ${name} is a symbolic link: not followed`) : new BeneathError(path, 'ENOTDIR', `${path}: ${name} is not a directory`);
  }

  /** The procfs name of `name` inside this directory (`openat(fd, name)` spelled as a path). */
  at(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) throw new BeneathError(name, 'EINVAL', `"${name}" is not a single path component`);
    return `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  /** This directory itself, as a path the kernel resolves to the held descriptor. */
  get self(): string {
    return `/proc/self/fd/${this.handle.fd}`;
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }

  /** fstat of the held directory. */
  stat(): Promise<Stats> {
    return this.handle.stat();
  }

  /** Sets the held directory's owner and mode through its descriptor. */
  async own(owner: Ownership): Promise<void> {
    if (owner.uid !== undefined || owner.gid !== undefined) await this.handle.chown(owner.uid ?? -1, owner.gid ?? -1);
    if (owner.mode !== undefined) await this.handle.chmod(owner.mode);
  }

  /** Sets the held directory's times. */
  async utimes(atime: Date | number, mtime: Date | number): Promise<void> {
    await this.handle.utimes(atime, mtime);
  }

  /**
   * Opens the directory `path` below this one, one component at a time, none followed. With
   * `create`, missing components are made (owner and mode as given); an existing link or file in
   * the way is refused, never replaced.
   */
  async dir(path: string, create?: Ownership): Promise<Beneath> {
    const parts = components(path);
    let here: Beneath = this;
    let owned = false;
    try {
      for (const part of parts) {
        let next: FileHandle;
        try {
          next = await open(here.at(part), DIR_FLAGS);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') throw await here.notADirectory(part, path);
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create) throw refusal(error, path);
          await mkdir(here.at(part), { mode: create.mode ?? 0o755 }).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw e; });
          next = await open(here.at(part), DIR_FLAGS).catch((e: unknown) => { throw refusal(e, path); });
          const made = new Beneath(next, `${here.label}/${part}`);
          await made.own(create);
          if (owned) await here.close();
          here = made;
          owned = true;
          continue;
        }
        if (owned) await here.close();
        here = new Beneath(next, `${here.label}/${part}`);
        owned = true;
      }
    } catch (error) {
      if (owned) await here.close();
      throw error;
    }
    // The empty path: a second handle on this directory (its `.`), so the caller may close either.
    return owned ? here : new Beneath(await open(`${this.self}/.`, DIR_FLAGS), this.label);
  }

  /**
   * Runs `body` in the directory `name` here, opened without following, and closes it after;
   * nothing runs when it is gone (swapped for a link or removed since it was listed).
   */
  async within(name: string, body: (child: Beneath) => Promise<void>): Promise<void> {
    let child: Beneath;
    try {
      child = await this.dir(name);
    } catch (error) {
      if (isGone(error)) return;
      throw error;
    }
    try {
      await body(child);
    } finally {
      await child.close();
    }
  }

  /** The held directory and last component of `path` (its parent opened without following); close the directory after. */
  async parentOf(path: string, create?: Ownership): Promise<{ dir: Beneath; name: string }> {
    const parts = components(path);
    const name = parts.pop();
    if (name === undefined) throw new BeneathError(path, 'EINVAL', `${path} names the root itself`);
    return { dir: await this.dir(parts.join('/'), create), name };
  }

  /**
   * `path` with its links resolved inside this tree as a chroot would (an absolute target from
   * the tree's root, `..` never above it, the last component too), as the container sees its
   * own tree; the answer has no link in it when the tree did not change meanwhile, and the
   * walk that uses it refuses any link it meets all the same. Missing components are kept as they are.
   */
  async resolve(path: string): Promise<string> {
    let pending = path.split('/').filter((p) => p !== '' && p !== '.');
    const done: string[] = [];
    // The directories of `done`, held as the walk goes down (held[i] is done[0..i]), so each
    // component is one lstat in the directory above it rather than a walk from the root. Shorter
    // than `done` once a component is missing or not a directory: what follows is kept as it is.
    const held: Beneath[] = [];
    const here = (): Beneath => held[held.length - 1] ?? this;
    let hops = 0;
    try {
      while (pending.length > 0) {
        const part = pending.shift() as string;
        if (part === '..') {
          done.pop();
          if (held.length > done.length) await held.pop()?.close();
          continue;
        }
        const inSync = held.length === done.length;
        const stat = inSync ? await here().lstatChild(part).catch(() => undefined) : undefined;
        if (stat?.isSymbolicLink()) {
          if (++hops > 40) throw new BeneathError(path, 'ELOOP', `${path}: too many levels of symbolic links`);
          const target = await here().readlink(part);
          if (target.startsWith('/')) {
            done.length = 0;
            for (const dir of held.splice(0)) await dir.close();
          }
          pending = [...target.split('/').filter((p) => p !== '' && p !== '.'), ...pending];
          continue;
        }
        done.push(part);
        if (stat?.isDirectory() && pending.length > 0) {
          const child = await here().dir(part).catch(() => undefined);
          if (child) held.push(child);
        }
      }
      return done.join('/');
    } finally {
      for (const dir of held) await dir.close();
    }
  }

  /** lstat of `path` (nothing followed), or undefined when it or a directory on the way is missing. */
  async lstat(path: string): Promise<Stats | undefined> {
    const { dir, name } = await this.parentOf(path).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { dir: undefined, name: '' };
      throw error;
    });
    if (!dir) return undefined;
    try {
      return await lstat(dir.at(name)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
    } finally {
      await dir.close();
    }
  }

  /** lstat of the entry `name` in this directory (not followed), or undefined when there is none. */
  async lstatChild(name: string): Promise<Stats | undefined> {
    return lstat(this.at(name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
  }

  /** The names in the directory `path` (this one for ''). */
  async list(path = ''): Promise<string[]> {
    const dir = await this.dir(path);
    try {
      return await readdir(dir.self);
    } finally {
      await dir.close();
    }
  }

  /** The target of the link `name` in this directory (a link is read, never followed). */
  readlink(name: string): Promise<string> {
    return readlink(this.at(name));
  }

  /**
   * Opens the regular file `path` for reading: not followed, opened non-blocking (a FIFO or a
   * device does not wait), and refused unless fstat says it is a regular file.
   */
  async openFile(path: string): Promise<FileHandle> {
    const { dir, name } = await this.parentOf(path);
    let file: FileHandle;
    try {
      file = await open(dir.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch((e: unknown) => { throw refusal(e, path); });
    } finally {
      await dir.close();
    }
    const stat = await file.stat();
    if (!stat.isFile()) {
      await file.close();
      throw new BeneathError(path, 'ENOTREG', `${path} is not a regular file`);
    }
    return file;
  }

  /**
   * The bytes of the regular file `path`, at most `maxBytes` of them (a larger file is refused),
   * or undefined when it is missing. A link, a FIFO or a device is refused, never read.
   */
  async readFile(path: string, maxBytes: number): Promise<Buffer | undefined> {
    let file: FileHandle;
    try {
      file = await this.openFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const { size } = await file.stat();
      if (size > maxBytes) throw new BeneathError(path, 'EFBIG', `${path} is larger than ${maxBytes} bytes`);
      const buffer = Buffer.alloc(size);
      let read = 0;
      while (read < size) {
        const { bytesRead } = await file.read(buffer, read, size - read, read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      return buffer.subarray(0, read);
    } finally {
      await file.close();
    }
  }

  /**
   * Writes `data` as a new regular file `path`: what was at the name (a file, a link, a FIFO; not
   * a directory) is unlinked first, then the file is made with `O_EXCL`, so nothing at the name
   * is followed. Owner and mode are set on the new descriptor.
   */
  async writeFile(path: string, data: string | Uint8Array, owner: Ownership = {}): Promise<void> {
    const { dir, name } = await this.parentOf(path);
    try {
      await dir.replaceable(name);
      const file = await open(dir.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, owner.mode ?? 0o644);
      try {
        await file.writeFile(data);
        if (owner.uid !== undefined || owner.gid !== undefined) await file.chown(owner.uid ?? -1, owner.gid ?? -1);
        if (owner.mode !== undefined) await file.chmod(owner.mode);
      } finally {
        await file.close();
      }
    } finally {
      await dir.close();
    }
  }

  /**
   * Creates the regular file `name` in this directory (`O_EXCL`: an existing entry is refused,
   * `EEXIST`) and answers its descriptor for writing.
   */
  async create(name: string, mode = 0o644): Promise<FileHandle> {
    return open(this.at(name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  }

  /** Makes the directory `name` here and opens it (an existing directory is opened, anything else refused). */
  async mkdir(name: string, owner: Ownership = {}): Promise<Beneath> {
    let made = true;
    await mkdir(this.at(name), { mode: owner.mode ?? 0o755 }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
      made = false;
    });
    const dir = await open(this.at(name), DIR_FLAGS).catch(async (e: NodeJS.ErrnoException) => {
      throw e.code === 'ENOTDIR' ? await this.notADirectory(name, `${this.label}/${name}`) : refusal(e, `${this.label}/${name}`);
    });
    const held = new Beneath(dir, `${this.label}/${name}`);
    if (made) await held.own(owner);
    return held;
  }

  /** Makes the link `name` -> `target` here (its owner set with lchown, which does not follow). */
  async symlink(target: string, name: string, owner: Ownership = {}): Promise<void> {
    await symlink(target, this.at(name));
    if (owner.uid !== undefined || owner.gid !== undefined) await lchown(this.at(name), owner.uid ?? -1, owner.gid ?? -1);
  }

  /** Sets a link's times without following it. */
  async lutimes(name: string, atime: Date | number, mtime: Date | number): Promise<void> {
    await lutimes(this.at(name), atime, mtime);
  }

  /** Copies the regular file `name` of `from` (opened without following) to a new file `name` here, descriptor to descriptor. */
  async copyFileFrom(from: Beneath, name: string, owner: Ownership, times?: { atime: Date; mtime: Date }): Promise<void> {
    const source = await open(from.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try {
      if (!(await source.stat()).isFile()) throw new BeneathError(name, 'ENOTREG', `${from.label}/${name} is not a regular file`);
      const dest = await this.create(name, 0o600);
      try {
        // Both ends by descriptor (procfs names of the two open files): copy_file_range, a reflink where the filesystem has one.
        await copyFile(`/proc/self/fd/${source.fd}`, `/proc/self/fd/${dest.fd}`, constants.COPYFILE_FICLONE);
        if (owner.uid !== undefined || owner.gid !== undefined) await dest.chown(owner.uid ?? -1, owner.gid ?? -1);
        if (owner.mode !== undefined) await dest.chmod(owner.mode);
        if (times) await dest.utimes(times.atime, times.mtime);
      } finally {
        await dest.close();
      }
    } finally {
      await source.close();
    }
  }

  /** Removes what is at `name` unless it is a directory (a link is removed, not followed); nothing there is fine. */
  async replaceable(name: string): Promise<void> {
    const stat = await lstat(this.at(name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (!stat) return;
    if (stat.isDirectory()) throw new BeneathError(`${this.label}/${name}`, 'EEXIST', `${name} is a directory`);
    await unlink(this.at(name)).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
  }

  /** Removes `name` here: a link or file unlinked, a directory removed with everything under it, nothing followed. */
  async remove(name: string): Promise<void> {
    const stat = await lstat(this.at(name)).catch(() => undefined);
    if (!stat) return;
    if (!stat.isDirectory()) {
      await unlink(this.at(name)).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
      return;
    }
    const child = await open(this.at(name), DIR_FLAGS).then((h) => new Beneath(h, `${this.label}/${name}`)).catch(() => undefined);
    if (child) {
      try {
        // The kind readdir reports spares an lstat per file (a file swapped for a directory since is
        // caught by unlink's EISDIR); a few removals in flight keep the threadpool busy.
        const entries = await readdir(child.self, { withFileTypes: true });
        let next = 0;
        const worker = async (): Promise<void> => {
          while (next < entries.length) {
            const entry = entries[next++]!;
            if (entry.isDirectory()) await child.remove(entry.name);
            else await child.unlinkEntry(entry.name);
          }
        };
        await Promise.all(Array.from({ length: Math.min(REMOVALS_IN_FLIGHT, entries.length) }, worker));
      } finally {
        await child.close();
      }
    }
    await rmdir(this.at(name)).catch(async (e: NodeJS.ErrnoException) => {
      // Swapped for a link meanwhile: remove the link, never what it names.
      if (e.code === 'ENOTDIR') await unlink(this.at(name));
      else if (e.code !== 'ENOENT') throw e;
    });
  }

  /** Unlinks `name` here (never followed); a directory there is removed with its content, nothing there is fine. */
  private async unlinkEntry(name: string): Promise<void> {
    await unlink(this.at(name)).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code === 'EISDIR' || e.code === 'EPERM') await this.remove(name);
      else if (e.code !== 'ENOENT') throw e;
    });
  }

  /** Sets the owner of `name` here without following it. */
  async lchown(name: string, uid: number, gid: number): Promise<void> {
    await lchown(this.at(name), uid, gid);
  }

  /** Sets owner and mode of a regular file or directory `name` here through a descriptor opened without following. */
  async ownEntry(name: string, owner: Ownership): Promise<void> {
    const handle = await open(this.at(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch((e: unknown) => { throw refusal(e, `${this.label}/${name}`); });
    try {
      if (owner.uid !== undefined || owner.gid !== undefined) await handle.chown(owner.uid ?? -1, owner.gid ?? -1);
      if (owner.mode !== undefined) await handle.chmod(owner.mode);
    } finally {
      await handle.close();
    }
  }
}
