import { spawn } from 'node:child_process';
import { EngineError } from '../../../engine-api/engine-error.js';

/**
 * Copies the contents of `source` into the existing directory `dest` with `cp -a
 * --reflink=auto` (owners, modes, links and times kept; a copy-on-write clone where the
 * filesystem has one). With `hardLinks`, files are linked instead of copied (`cp -al`): only
 * for trees nobody writes in place, such as the store's unpacked image roots, where a layer
 * applied on top replaces a file (unlink, then a new inode) rather than writing into it.
 */
export function copyTree(source: string, dest: string, hardLinks = false): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn('cp', [hardLinks ? '-al' : '-a', ...(hardLinks ? [] : ['--reflink=auto']), '--', `${source}/.`, dest], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(EngineError.system(`copying a root filesystem failed: ${err.trim()}`))));
  });
}
