import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Host directories backing the containers' `HostConfig.Tmpfs` mounts: `<dir>/<id>/<n>` for the
 * n-th Tmpfs path, bound into the container and into each of its execs. An exec gets its own
 * mount namespace (see bwrap-args.ts `bwrapExecArgs`), where a tmpfs of its own would be empty;
 * dockerd's exec sees the container's tmpfs files, so both bind the same directory instead.
 * `dir` is on a host tmpfs (`/dev/shm` by default), so the mount is still `tmpfs` in the
 * container's /proc/mounts and its files live in memory. They are emptied when the container
 * starts and removed when it exits or is removed, as a tmpfs goes with its mount.
 */
export class SharedTmpfs {
  private checked = false;

  constructor(private readonly dir: string) {}

  /** The host directory of each Tmpfs path of a container (as made by {@link prepare}). */
  sources(id: string, paths: readonly string[]): Record<string, string> {
    return Object.fromEntries(paths.map((path, n) => [path, join(this.dir, id, String(n))]));
  }

  /** Fresh, empty directories for a starting container (mode 0755, as bwrap's tmpfs). */
  prepare(id: string, paths: readonly string[]): Record<string, string> {
    this.remove(id);
    if (paths.length === 0) return {};
    this.ensureBase();
    const sources = this.sources(id, paths);
    for (const source of Object.values(sources)) {
      mkdirSync(source, { recursive: true, mode: 0o755 });
      chmodSync(source, 0o755);
    }
    return sources;
  }

  /** Removes a container's directories and everything written in them. */
  remove(id: string): void {
    if (!/^[0-9a-f]+$/.test(id)) return;
    rmSync(join(this.dir, id), { recursive: true, force: true });
  }

  /**
   * The base directory is made private (0700) to the server's user: under a world-writable
   * /dev/shm another user could otherwise have made it first, or a symlink in its place.
   */
  private ensureBase(): void {
    if (this.checked) return;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(this.dir);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
      throw new Error(`${this.dir} (the tmpfsDir) must be a directory owned by this user with mode 0700`);
    }
    this.checked = true;
  }
}
