import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** A temporary name next to `path`, so a rename onto `path` stays on one file system. */
export const tempPathFor = (path: string): string => join(dirname(path), `.tmp-${randomBytes(6).toString('hex')}`);

/**
 * Writes a file so that a crash leaves either the old or the new content, never half of it:
 * write a temporary file, fsync it, rename it over the target.
 */
export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  const temp = tempPathFor(path);
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(temp, path);
}
