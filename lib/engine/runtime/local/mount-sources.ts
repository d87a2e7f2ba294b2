import { realpath } from 'node:fs/promises';
import type { MountPoint } from './container-mounts.js';

/**
 * Resolves the links of each bind's and volume's host source, once, and keeps the answer in the
 * mount point (`resolved`): the path the tenant policy checked with its links resolved is the one
 * every start binds, and a start walks it without following anything (the sandbox's
 * held-binds.ts), so a link planted on the way after create is refused, never followed. A mount
 * that has its answer already (copied by `--volumes-from`) keeps it; a missing source is left
 * for the executor's own refusal (or a record kept by an older server: resolved at its next start).
 */
export async function resolveMountSources(mounts: readonly MountPoint[]): Promise<void> {
  for (const m of mounts) {
    if (m.resolved !== undefined || (m.Type !== 'bind' && m.Type !== 'volume') || !m.Source.startsWith('/')) continue;
    const resolved = await realpath(m.Source).catch(() => undefined);
    if (resolved !== undefined) m.resolved = resolved;
  }
}
