import { lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Beneath } from '../../linux/beneath.js';
import { LAUNCHER_ENV } from '../../linux/launcher-env.js';
import { runOffLoop, type CommandResult } from '../../linux/off-loop-command.js';
import type { TmpfsMount } from './tmpfs-options.js';

/** Where the tmpfs mounts of a rootless server live: its user namespace (`owner`) and the mount namespace holding them (`mnt`). */
export interface TmpfsNamespace {
  owner: string;
  mnt: string;
}

/** What a start and an exec need of the containers' Tmpfs mounts ({@link SharedTmpfs} as root, rootless-tmpfs.ts rootless). */
export interface ContainerTmpfs {
  prepare(id: string, mounts: readonly TmpfsMount[]): Record<string, string> | Promise<Record<string, string>>;
  remove(id: string): void | Promise<void>;
  /** Rootless: the namespaces a launcher or exec enters to see them; none: they are on the host. */
  namespace?(): TmpfsNamespace | undefined;
}

/**
 * Host directories backing the containers' `HostConfig.Tmpfs` mounts: `<dir>/<id>/<n>` for the
 * n-th Tmpfs path, bound into the container and into each of its execs. An exec gets its own
 * mount namespace (see bwrap-args.ts `bwrapExecArgs`), where a tmpfs of its own would be empty;
 * dockerd's exec sees the container's tmpfs files, so both bind the same directory instead.
 * Each is a tmpfs of its own, mounted on the host with its size cap (`size=`, else the
 * server's tmpfsSize), so the mount is `tmpfs` in the container's /proc/mounts and its files
 * live in memory. They are made empty when the container starts and unmounted when it exits or
 * is removed, as a tmpfs goes with its mount. mount(8) and umount(8) run off the event loop
 * (off-loop-command.ts), and the directories are made and removed with asynchronous calls: a
 * start or removal never holds the server through a fork. Where the mounts are made is the one
 * thing a subclass changes ({@link runMount}: rootless-tmpfs.ts makes them in a namespace).
 */
export class SharedTmpfs implements ContainerTmpfs {
  private checked = false;
  /** Said after "cannot mount a tmpfs for PATH" when a mount fails: where it was made. */
  protected readonly where: string = '';

  constructor(protected readonly dir: string) {}

  /** The host directory of each Tmpfs path of a container (as made by {@link prepare}). */
  sources(id: string, paths: readonly string[]): Record<string, string> {
    return Object.fromEntries(paths.map((path, n) => [path, join(this.dir, id, String(n))]));
  }

  /**
   * Fresh, empty tmpfs mounts for a starting container, one per Tmpfs path, each of its own size
   * (so a container cannot fill the host's memory through one) and root mode, nosuid and nodev.
   * Mounted on the host (the server runs as root) and bound into the container and its execs.
   */
  async prepare(id: string, mounts: readonly TmpfsMount[]): Promise<Record<string, string>> {
    await this.remove(id);
    if (mounts.length === 0) return {};
    await this.ensureBase();
    const sources = this.sources(id, mounts.map((m) => m.path));
    try {
      for (const mount of mounts) {
        const source = sources[mount.path]!;
        await mkdir(source, { recursive: true, mode: 0o700 });
        const flags = ['nosuid', 'nodev', ...(mount.noexec ? ['noexec'] : []), `size=${mount.size}`, `mode=${mount.mode.toString(8).padStart(4, '0')}`];
        const done = await this.runMount('mount', ['-t', 'tmpfs', '-o', flags.join(','), 'tmpfs', source]);
        if (done?.code !== 0) throw new Error(`cannot mount a ${mount.size}-byte tmpfs for ${mount.path}${this.where}: ${done?.stderr.trim() || `status ${String(done?.code ?? done?.signal)}`}`);
      }
    } catch (error) {
      await this.remove(id);
      throw error;
    }
    return sources;
  }

  /** Unmounts and removes a container's tmpfs mounts and everything written in them. */
  async remove(id: string): Promise<void> {
    if (!/^[0-9a-f]+$/.test(id)) return;
    const dir = join(this.dir, id);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      return;
    }
    // Lazily (-l): a process of the exiting container may still hold one for a moment.
    if (names.length > 0) await this.runMount('umount', ['-l', ...names.map((name) => join(dir, name))]).catch(() => undefined);
    // What is left is the emptied mount points (or, where an unmount failed, what the container
    // wrote): removed through the no-follow walker.
    await Beneath.removeIn(this.dir, id);
  }

  /**
   * mount(8) or umount(8) with `args` where the mounts live: here on the host, as root, off the
   * event loop. Undefined when there is nowhere to run it yet (a subclass's namespace not made).
   */
  protected runMount(tool: 'mount' | 'umount', args: readonly string[]): Promise<CommandResult | undefined> {
    return runOffLoop(tool, args, { env: { ...LAUNCHER_ENV } });
  }

  /**
   * The base directory is made private (0700) to the server's user: under a world-writable
   * /dev/shm another user could otherwise have made it first, or a symlink in its place.
   */
  private async ensureBase(): Promise<void> {
    if (this.checked) return;
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const st = await lstat(this.dir);
    const uid = process.getuid?.();
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o077) !== 0) {
      throw new Error(`${this.dir} (the tmpfsDir) must be a directory owned by this user with mode 0700`);
    }
    this.checked = true;
  }
}
