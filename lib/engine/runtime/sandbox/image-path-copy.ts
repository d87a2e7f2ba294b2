import { spawn } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import { join, posix } from 'node:path';

/** Symlinks followed before a path is given up on (the kernel's own limit is 40). */
const MAX_LINKS = 40;

/**
 * The host path of `path` inside the root filesystem `root`, with every symlink resolved as the
 * container would resolve it (an absolute target from `root`, `..` never above it), or undefined
 * when it does not exist. A container path is never resolved on the host: an image's
 * `/data -> /etc` must name the image's /etc, not the server's.
 */
export function pathInRoot(root: string, path: string): string | undefined {
  let pending = path.split('/').filter((p) => p !== '' && p !== '.');
  const resolved: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    const host = join(root, ...resolved, part);
    let stat;
    try {
      stat = lstatSync(host);
    } catch {
      return undefined;
    }
    if (!stat.isSymbolicLink()) {
      resolved.push(part);
      continue;
    }
    if (++links > MAX_LINKS) return undefined;
    const target = readlinkSync(host);
    const rest = target.split('/').filter((p) => p !== '' && p !== '.');
    if (posix.isAbsolute(target)) resolved.length = 0;
    pending = [...rest, ...pending];
  }
  return join(root, ...resolved);
}

/**
 * Copies the directory `path` of the root filesystem `root` into the directory `into` with
 * owners, modes, times and symlinks kept, `into` taking the directory's own owner and mode
 * (dockerd's copyExistingContents and copyOwnership). GNU `cp -a` does exactly that; Node's
 * `fs.cp` keeps neither owners nor devices. Nothing happens when the image has no directory there.
 */
export async function copyImagePath(root: string, path: string, into: string): Promise<void> {
  const source = pathInRoot(root, path);
  if (source === undefined || !lstatSync(source).isDirectory()) return;
  await new Promise<void>((resolve, reject) => {
    const child = spawn('cp', ['-a', '--', `${source}/.`, into], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`copying the image's ${path} into its volume failed: ${stderr.trim()}`))));
  });
}
