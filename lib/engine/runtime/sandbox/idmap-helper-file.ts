import { chmodSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { idmapHelper } from '../../linux/idmap-helper.js';

/**
 * The idmap helper (linux/idmap-helper.ts) written once in the state directory, 0700 (renamed
 * into place: a helper of a previous server may still be running); none off x86-64.
 */
export function writeIdmapHelper(stateDir: string): string | undefined {
  const elf = idmapHelper();
  if (!elf) return undefined;
  const path = join(stateDir, 'idmap-bind');
  writeFileSync(`${path}.new`, elf, { mode: 0o700 });
  chmodSync(`${path}.new`, 0o700);
  renameSync(`${path}.new`, path);
  return path;
}
