import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** A temporary name next to `path`, so a rename onto `path` stays on one file system. */
export const tempPathFor = (path: string): string => join(dirname(path), `.tmp-${randomBytes(6).toString('hex')}`);

/** How {@link writeFileAtomic} treats the file it replaces. */
export interface AtomicWriteOptions {
  /** Mode of a new file. Defaults to `0o644`. */
  mode?: number;
  /**
   * An existing file keeps its mode exactly (the umask applies at creation) and, when the server
   * is root, its owner: for a file someone else maintains (htpasswd). Defaults to false.
   */
  keepMode?: boolean;
  /** fsync the directory too, so the rename itself survives a crash. Defaults to false. */
  syncDirectory?: boolean;
}

/**
 * Writes a file so that a reader sees the old content or the new, never half of it, and a crash
 * leaves one of them: write a temporary file in the same directory (same filesystem, so the
 * rename is atomic), fsync it, rename it over the target.
 *
 * Written here rather than taken from write-file-atomic (npm's): that package ships no types and
 * does not fsync the directory, and what is needed is these few steps.
 */
export async function writeFileAtomic(path: string, data: string | Buffer, options: AtomicWriteOptions = {}): Promise<void> {
  const { mode = 0o644, keepMode = false, syncDirectory = false } = options;
  const previous = keepMode
    ? await stat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    })
    : undefined;
  const temp = tempPathFor(path);
  // wx: never follow or reuse a file someone placed under the temporary name.
  const handle = await open(temp, 'wx', previous ? previous.mode & 0o7777 : mode);
  try {
    await handle.writeFile(data);
    if (previous) {
      // The umask applies at creation: set the old mode exactly, then the owner (root may give it back).
      await handle.chmod(previous.mode & 0o7777);
      if (process.getuid?.() === 0) await handle.chown(previous.uid, previous.gid);
    }
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  if (!syncDirectory) return;
  const directory = await open(dirname(path), 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
