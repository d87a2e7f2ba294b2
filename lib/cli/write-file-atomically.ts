import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replaces `file` with `content` so that a reader (htpasswdAuthenticator re-reading the table on
 * change) sees the old file or the new one, never half of it, and a crash leaves one of them:
 * the content goes to a new file in the same directory (same filesystem, so the rename is
 * atomic), is fsynced, given the old file's mode and owner, and renamed over the old one; the
 * directory is fsynced so the rename itself survives a crash.
 *
 * Written here rather than taken from write-file-atomic (npm's): that package ships no types and
 * does not fsync the directory, and what is needed is these few steps.
 *
 * @param mode the mode of a file that does not exist yet (an existing file keeps its own).
 */
export async function writeFileAtomically(file: string, content: string, mode: number): Promise<void> {
  const previous = await stat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const dir = dirname(file);
  const temp = join(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  // wx: never follow or reuse a file someone placed under the temporary name.
  const handle = await open(temp, 'wx', previous ? previous.mode & 0o7777 : mode);
  try {
    await handle.writeFile(content, 'utf8');
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
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}
