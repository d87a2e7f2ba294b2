import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { NamespaceOwners } from '../../../images/image-store-types.js';
import type { RootlessUserns } from './rootless-userns.js';

/**
 * The image store's side of a rootless server's mapped namespace (store option
 * `namespaceOwners`): the layers are unpacked as the server's user with each owner recorded, then
 * the finished root gets those owners inside the namespace, where container uid `n` is host
 * `range + n - 1`. So an image's files keep the owners it gives them, as container ids.
 *
 * The root is the server's own unpack, complete and not yet in use, but its names come from a
 * layer: an entry is given its owner only when every directory above it is a directory (no link,
 * each checked once with lstat before any owner changes), so `chown -h` (which follows no link at
 * the name) changes nothing outside the root. Entries a later layer removed are not there and are
 * left out.
 */
export function mappedOwners(ns: RootlessUserns): NamespaceOwners {
  return {
    size: ns.size,
    apply: async (root, table) => {
      const byOwner = new Map<string, string[]>();
      const dirs = new Map<string, boolean>([['', true]]);
      for (const [path, [uid, gid]] of table) {
        if (!(await reachable(root, path, dirs))) continue;
        const key = `${uid}:${gid}`;
        const list = byOwner.get(key) ?? [];
        list.push(path === '' ? root : join(root, path));
        byOwner.set(key, list);
      }
      for (const [owner, paths] of byOwner) {
        const done = await ns.run(['xargs', '-0', '-r', 'chown', '-h', owner, '--'], `${paths.join('\0')}\0`);
        if (done.code !== 0) throw EngineError.system(`giving the image's files owner ${owner} in the rootless user namespace failed: ${done.stderr.trim()}`);
      }
    },
    run: async (argv) => {
      const done = await ns.run(argv);
      if (done.code !== 0) throw EngineError.system(`${argv[0] ?? ''} in the rootless user namespace failed: ${done.stderr.trim()}`);
    },
  };
}

/** Whether `path` is in `root` with only directories above it (`dirs`: what is known of each parent). */
async function reachable(root: string, path: string, dirs: Map<string, boolean>): Promise<boolean> {
  if (path === '') return true;
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const parent = parts.slice(0, i).join('/');
    let isDir = dirs.get(parent);
    if (isDir === undefined) {
      isDir = (await lstat(join(root, parent)).catch(() => undefined))?.isDirectory() === true;
      dirs.set(parent, isDir);
    }
    if (!isDir) return false;
  }
  return (await lstat(join(root, path)).catch(() => undefined)) !== undefined;
}
