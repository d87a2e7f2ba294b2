import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import { Beneath } from '../../linux/beneath.js';
import { runOffLoop } from '../../linux/off-loop-command.js';
import { METACOPY_OPTIONS } from '../../images/store/shifted-rootfs.js';

/** A container's overlay directories: its own writes (`upper`), overlayfs's `work` and the mounted view (`merged`). */
export interface OverlayPaths {
  dir: string;
  upper: string;
  work: string;
  merged: string;
}

/** The host tools an overlay is mounted and unmounted with (util-linux). */
export interface OverlayTools {
  mount: string;
  umount: string;
}

/**
 * Mount options besides the layers: metadata-only copy-up, which the range's layer of owners
 * needs (shifted-rootfs.ts), with directory redirects; no index. `docker diff` and commit read the
 * mounted view for what the upper layer names (a renamed directory's content is in the layers below).
 */
const OPTIONS = METACOPY_OPTIONS;

/**
 * Each container's root filesystem as a kernel overlay (as dockerd's overlay2): the image's
 * unpacked tree for the container's owner range as the one read-only lower layer, shared by every
 * container of that image and range, and the container's own upper and work directories under
 * `dir/<id>`. A start costs one `mount(8)` instead of a copy of the image, and a container takes
 * on disk only what it writes.
 *
 * The overlay is mounted by the server (root, in its own mount namespace) at a container's first
 * use of its root (start, copy, export, diff), stays mounted until the container is removed or
 * the runtime closes, and is mounted again on demand after that. Overlays a previous server left
 * mounted under `dir` are detached at construction, before anything is mounted again; the
 * directories of containers that no longer exist (`keep` lists those that do) are removed.
 */
export class OverlayRootfs {
  /** Container ID -> its mount, done or under way. */
  private readonly mounted = new Map<string, Promise<string>>();
  /** Container ID -> its unmount under way: a mount waits for it (two live mounts on one upper directory are undefined behaviour). */
  private readonly unmounting = new Map<string, Promise<void>>();
  /** Removals under way (close waits for them). */
  private readonly removing = new Set<Promise<void>>();
  /** Leftover mounts detached and stale directories removed (what every mount waits for first). */
  private readonly recovered: Promise<void>;

  constructor(readonly dir: string, private readonly tools: OverlayTools, keep: ReadonlySet<string>) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const left = mountsUnder(dir);
    this.recovered = (async () => {
      for (const target of left) await run(this.tools.umount, ['-l', '--', target]).catch(() => undefined);
      for (const id of readdirSync(dir)) if (!keep.has(id)) await Beneath.removeIn(dir, id).catch(() => undefined);
    })();
  }

  paths(id: string): OverlayPaths {
    if (!/^[0-9a-f]{8,128}$/.test(id)) throw EngineError.system(`not a container ID: ${id}`);
    const dir = join(this.dir, id);
    return { dir, upper: join(dir, 'upper'), work: join(dir, 'work'), merged: join(dir, 'merged') };
  }

  /** The lower layer the container's overlay was first mounted on (its image's tree), or undefined. */
  async lowerOf(id: string): Promise<string | undefined> {
    return readFile(join(this.paths(id).dir, 'lower'), 'utf8').catch(() => undefined);
  }

  /** Whether the container has written anything yet (has an upper directory). */
  async exists(id: string): Promise<boolean> {
    return (await stat(this.paths(id).upper).catch(() => undefined)) !== undefined;
  }

  /** The container's merged root over `lower` (overlayfs's lowerdir: layers separated by colons, top first; mounted now unless it is already). */
  mount(id: string, lower: string): Promise<string> {
    let pending = this.mounted.get(id);
    if (!pending) {
      pending = this.mountNow(id, lower);
      this.mounted.set(id, pending);
      pending.catch(() => this.mounted.delete(id));
    }
    return pending;
  }

  private async mountNow(id: string, lower: string): Promise<string> {
    await this.recovered;
    await this.unmounting.get(id);
    const p = this.paths(id);
    // mount(8) options are separated by commas and overlayfs's lower layers by colons.
    for (const path of [...lower.split(':'), p.dir]) {
      if (/[,:\\\s]/.test(path)) throw EngineError.system(`cannot mount an overlay on ${path}: the path holds a comma, colon, backslash or space`);
    }
    await mkdir(p.dir, { recursive: true, mode: 0o700 });
    if (!(await this.exists(id))) {
      // The merged root takes the upper directory's owner and mode: the image root's (its range's
      // root). Made under another name and renamed, so that an upper directory is always owned so.
      const image = await stat(lower.split(':')[0]!);
      const making = `${p.upper}.new`;
      await rm(making, { recursive: true, force: true });
      await mkdir(making, { mode: 0o755 });
      const upper = await Beneath.open(making);
      try {
        await upper.own({ uid: image.uid, gid: image.gid, mode: image.mode & 0o7777 });
      } finally {
        await upper.close();
      }
      await rename(making, p.upper);
    }
    await writeFile(join(p.dir, 'lower'), lower, { mode: 0o600 });
    await mkdir(p.work, { recursive: true, mode: 0o700 });
    await mkdir(p.merged, { recursive: true, mode: 0o755 });
    await run(this.tools.mount, ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${p.upper},workdir=${p.work},${OPTIONS}`, '--', p.merged])
      .catch((error: Error) => {
        throw EngineError.system(`mounting the container's root filesystem overlay failed: ${error.message}`);
      });
    return p.merged;
  }

  /** Unmounts the container's overlay when it is mounted (its directories stay). */
  async unmount(id: string): Promise<void> {
    const pending = this.mounted.get(id);
    if (!pending) return;
    this.mounted.delete(id);
    if (!(await pending.then(() => true, () => false))) return;
    const { merged } = this.paths(id);
    // A process of the server's own (an export's tar just ended) may still hold it a moment: tried
    // again for a while before it is detached (a detached mount stays alive while held).
    const done = (async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        if ((await runOffLoop(this.tools.umount, ['--', merged])).code === 0) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      await run(this.tools.umount, ['-l', '--', merged]);
    })();
    this.unmounting.set(id, done.catch(() => undefined));
    try {
      await done;
    } finally {
      this.unmounting.delete(id);
    }
  }

  /** Unmounts the overlay and deletes the container's writes (the container is removed). */
  async remove(id: string): Promise<void> {
    const removal = (async () => {
      await this.unmount(id);
      await Beneath.removeIn(this.dir, id);
    })();
    this.removing.add(removal);
    try {
      await removal;
    } finally {
      this.removing.delete(removal);
    }
  }

  /** Unmounts every overlay (the runtime is closing; the writes stay for the next server). */
  async close(): Promise<void> {
    // A removal under way (`rm -f` answers first) ends before the runtime does: its mount is gone then.
    await Promise.allSettled([...this.removing]);
    await Promise.all([...this.mounted.keys()].map((id) => this.unmount(id).catch(() => undefined)));
  }
}

/** Mount points below `dir` in this process's mount table, deepest first (octal escapes of mountinfo decoded). */
export function mountsUnder(dir: string): string[] {
  const prefix = `${dir}/`;
  return readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
    .map((line) => line.split(' ')[4])
    .filter((field): field is string => field !== undefined)
    .map((field) => field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((target) => target.startsWith(prefix))
    .sort((a, b) => b.length - a.length);
}

/** mount(8)/umount(8), run off the event loop (off-loop-command.ts): a spawn from the server holds it through the fork. */
async function run(file: string, args: string[]): Promise<void> {
  const { code, stderr } = await runOffLoop(file, args);
  if (code !== 0) throw new Error(`${file} exited with ${String(code)}: ${stderr.trim()}`);
}
