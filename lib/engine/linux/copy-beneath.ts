import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { Beneath } from './beneath.js';

/** What a copy made and what it left out (device nodes, FIFOs and sockets: Node cannot mknod). */
export interface CopyReport { entries: number; skipped: string[] }

/** Entries copied at most, so a huge tree cannot hold the server. */
const MAX_ENTRIES = 1_000_000;

/**
 * Copies the contents of the held directory `from` into the held directory `to` with owners,
 * modes, times and links kept, nothing followed on either side (beneath.ts's rule): the source
 * may be a container's root filesystem and the destination a volume other containers write in
 * at the same time. Each entry is created with `O_EXCL` or `mkdir` (an entry planted meanwhile
 * makes the copy fail, it is never written through); owners and modes are set on the created
 * descriptor, or with lchown for links. Hard links become separate files; device nodes, FIFOs
 * and sockets are skipped and reported. Used for a volume's first fill (dockerd's
 * copyExistingContents) in place of `cp -a`, which opens destination names as root.
 */
export async function copyBeneath(from: Beneath, to: Beneath, report: CopyReport = { entries: 0, skipped: [] }, rel = ''): Promise<CopyReport> {
  for (const name of (await from.list()).sort()) {
    if (++report.entries > MAX_ENTRIES) throw new Error(`more than ${MAX_ENTRIES} entries to copy`);
    const stat: Stats | undefined = await lstat(from.at(name)).catch(() => undefined);
    if (!stat) continue;
    const owner = { uid: stat.uid, gid: stat.gid, mode: stat.mode & 0o7777 };
    if (stat.isDirectory()) {
      const source = await from.dir(name);
      try {
        const dest = await to.mkdir(name, { ...owner, mode: 0o700 });
        try {
          await copyBeneath(source, dest, report, `${rel}/${name}`);
          await dest.own(owner);
          await dest.utimes(stat.atime, stat.mtime);
        } finally {
          await dest.close();
        }
      } finally {
        await source.close();
      }
    } else if (stat.isFile()) {
      await to.copyFileFrom(from, name, owner, { atime: stat.atime, mtime: stat.mtime });
    } else if (stat.isSymbolicLink()) {
      await to.symlink(await from.readlink(name), name, owner);
      await to.lutimes(name, stat.atime, stat.mtime).catch(() => undefined);
    } else {
      report.skipped.push(`${rel}/${name}`);
    }
  }
  return report;
}
