import type { ContainerChange } from '../../../engine-api/container-operations.js';

/** Paths a container gets as mounts (kernel filesystems) rather than files: never changes. */
const MOUNTED_TREES = ['/dev', '/proc', '/sys'];

/**
 * Files dockerd puts in every container's init layer (daemon/initlayer, container setup), below
 * the layer `docker diff` reads, so they never show as changes there.
 */
const INIT_LAYER_FILES = ['/.dockerenv', '/etc/hosts', '/etc/hostname', '/etc/resolv.conf', '/etc/mtab'];

/**
 * `docker diff` without what dockerd never lists: `/dev`, `/proc` and `/sys` (and all below
 * them), which are mounts, and the init layer's files. A sandbox rootfs copy gains the mount
 * points when bwrap mounts over an image that lacks them; dockerd's init layer makes them
 * instead, so for an image without `/etc` an added `/etc` is not listed, or is listed as
 * modified when files were written below it (the init layer has it); an image's own /etc
 * changed only by those mount points is not listed either.
 *
 * @example
 * withoutMountedPaths([{ Path: '/dev', Kind: 1 }, { Path: '/tmp/x', Kind: 1 }]); // [{ Path: '/tmp/x', Kind: 1 }]
 */
export function withoutMountedPaths(changes: readonly ContainerChange[]): ContainerChange[] {
  const kept = changes.filter(({ Path: path }) => !MOUNTED_TREES.some((root) => path === root || path.startsWith(`${root}/`)) && !INIT_LAYER_FILES.includes(path));
  const below = kept.some((c) => c.Path.startsWith('/etc/'));
  // An image's own /etc that changed only by the mount points made in it (the init layer's files) did not change for dockerd.
  if (!below && changes.some((c) => c.Path.startsWith('/etc/') && INIT_LAYER_FILES.includes(c.Path))) {
    const etcChanged = kept.findIndex((c) => c.Path === '/etc' && c.Kind === 0);
    if (etcChanged >= 0) return kept.filter((_, i) => i !== etcChanged);
  }
  const etcAdded = kept.findIndex((c) => c.Path === '/etc' && c.Kind === 1);
  if (etcAdded < 0) return kept;
  // The init layer's /etc is the lower one: with files written below it, it shows as modified.
  if (below) return kept.map((c, i) => (i === etcAdded ? { Path: '/etc', Kind: 0 } : c));
  return kept.filter((_, i) => i !== etcAdded);
}
