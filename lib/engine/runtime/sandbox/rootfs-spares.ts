import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { IdMap } from './userns/id-map.js';

/** Makes a fresh copy of an image's root filesystem at `dest` (which does not exist yet), shifted for `map` when given. */
export type MakeRootfs = (imageId: string, dest: string, map?: IdMap) => Promise<void>;

/** How many images keep a spare copy (the ones started most recently; an image copied for two owners' ranges counts twice). */
const MAX_IMAGES = 4;

/**
 * One untouched root filesystem copy per recently started image, made in the background, so
 * that a start takes a copy by renaming it (one rename) instead of copying the image there and
 * then. The copy is what a start would have made (the same `make`, from the same image's
 * content, shifted for the same user namespace range: each owner's its own): no container has ever run on it. Without an
 * overlay mount (bwrap 0.8 has none), the copy is the slowest step of a start: on this project's
 * ext4 VMs a symlink costs close to a millisecond to create (strace: 0.75 ms per symlinkat), and
 * the busybox image's 267 applet links made the copy 150-170 ms of a `docker run --rm busybox
 * true` that dockerd answers in about 200.
 *
 * Spares live in `dir`, on the same filesystem as the containers (a rename does not cross
 * filesystems); whatever is there at construction is a leftover of an earlier server and is
 * removed. The most recently used {@link MAX_IMAGES} images keep one; the rest are deleted.
 */
export class RootfsSpares {
  /** Image ID and range (`spareKey`) -> its spare: ready (a path) or being made. */
  private readonly spares = new Map<string, Promise<string | undefined>>();
  /** Background copies and deletions not yet finished (what {@link idle} waits for). */
  private readonly work = new Set<Promise<unknown>>();
  private counter = 0;
  private closed = false;

  constructor(private readonly dir: string, private readonly make: MakeRootfs) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) this.track(rm(join(dir, name), { recursive: true, force: true }).catch(() => undefined));
  }

  /**
   * Gives `dest` a copy of the image's root filesystem: the spare when one is ready or on its
   * way, else one made now. Either way a new spare is then made for the next start.
   */
  async take(imageId: string, dest: string, map?: IdMap): Promise<void> {
    const key = spareKey(imageId, map);
    const pending = this.spares.get(key);
    this.spares.delete(key);
    const spare = pending ? await pending : undefined;
    let taken = false;
    if (spare !== undefined) {
      try {
        renameSync(spare, dest);
        taken = true;
      } catch {
        void rm(spare, { recursive: true, force: true }).catch(() => undefined);
      }
    }
    if (!taken) await this.make(imageId, dest, map);
    this.prepare(imageId, map);
  }

  /** Starts making a spare for the image and range, unless it has one; drops the least recently used beyond {@link MAX_IMAGES}. */
  private prepare(imageId: string, map: IdMap | undefined): void {
    const key = spareKey(imageId, map);
    if (this.closed || this.spares.has(key)) return;
    const path = join(this.dir, `${imageId.replace(/^sha256:/, '').slice(0, 16)}-${++this.counter}`);
    // Deferred a moment: the start that asked goes on first, the copy runs while its container does.
    const made = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.make(imageId, path, map))
      .then(() => path, async () => {
        await rm(path, { recursive: true, force: true }).catch(() => undefined);
        return undefined;
      });
    this.spares.set(key, made);
    this.track(made);
    while (this.spares.size > MAX_IMAGES) {
      const [oldest, spare] = this.spares.entries().next().value as [string, Promise<string | undefined>];
      this.spares.delete(oldest);
      this.track(this.discard(spare));
    }
  }

  /** Resolves once every background copy and deletion started so far has finished. */
  async idle(): Promise<void> {
    while (this.work.size > 0) await Promise.all([...this.work]);
  }

  private track(work: Promise<unknown>): void {
    this.work.add(work);
    void work.finally(() => this.work.delete(work));
  }

  /** Deletes every spare (the runtime is closing). */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.spares.values()];
    this.spares.clear();
    await Promise.all(all.map((spare) => this.discard(spare)));
  }

  private async discard(spare: Promise<string | undefined>): Promise<void> {
    const path = await spare;
    if (path !== undefined) await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** A spare's key: its image and the range it was shifted for (a spare for one owner's range never goes to another's container). */
function spareKey(imageId: string, map: IdMap | undefined): string {
  return map ? `${imageId} ${map.uid}.${map.gid}.${map.size}` : imageId;
}
