import { EngineError } from '../../../engine-api/engine-error.js';
import { allocatedBytes, BlockCount, TreeTooLargeError } from '../../linux/allocated-bytes.js';

/** Entries one owner's measure walks at most (its copies and volumes together); beyond, the owner is over its cap. */
const MAX_ENTRIES_PER_OWNER = 2_000_000;
/** Directory levels walked at most (each level holds a descriptor); deeper, the owner is over its cap. */
const MAX_DEPTH = 256;
/** An image's own root is the server's tree: bounded only so that a broken store cannot hold the walk. */
const MAX_IMAGE_ENTRIES = 10_000_000;

/** A container as the cap sees it. */
export interface DiskCapContainer {
  id: string;
  /** Its `dockgate.owner` label; a container without one is not capped. */
  owner?: string;
  imageId: string;
  running: boolean;
  /** The names of the volumes it mounts (an unlabelled one, anonymous, is charged to the owners mounting it). */
  volumes: string[];
}

/** A volume as the cap sees it. */
export interface DiskCapVolume {
  name: string;
  /** Its `dockgate.owner` label, when it has one. */
  owner?: string;
  /** Its directory (`volumes/<name>/_data`). */
  path: string;
}

/** What the cap reads and does, from the runtime it guards. */
export interface DiskCapHost {
  containers(): Promise<DiskCapContainer[]>;
  volumes(): Promise<DiskCapVolume[]>;
  /**
   * Where the container's writes are (they may not exist yet): its overlay's upper layer, or a
   * whole copy of the image (`copy`: the image's own size is subtracted).
   */
  rootfs(id: string): { path: string; copy: boolean };
  /** The image root a copy starts as, or undefined when there is none to subtract. */
  imageRootfs(imageId: string): Promise<string | undefined>;
  /** Kills the running container, `reason` becoming its State.Error. */
  kill(id: string, reason: string): Promise<void>;
}

/** One owner's measure: bytes, or why its trees could not be measured (then it is over). */
interface Usage { bytes: number; unmeasured?: string }

const MIB = 1024 * 1024;
const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;

/**
 * A byte cap per owner (the `dockgate.owner` label) on what its containers and volumes take on
 * the server's disk, checked as they grow: the owners' trees are walked every `intervalMs` (one
 * walk at a time, the next `intervalMs` after the last ended, on an unref'd timer), and an owner
 * over `maxBytes` has its running containers killed, State.Error naming the cap; its operations
 * that grow them are refused with a 403 naming the cap ({@link admit}) until it removes enough.
 *
 * What counts, all through {@link allocatedBytes} (no link followed, each inode once, st_blocks):
 * - of each container's root filesystem copy, what it takes beyond its image's own root (the
 *   copy starts as the image; `cp -a --reflink=auto` shares its blocks on a copy-on-write
 *   filesystem, duplicates them elsewhere, and either way the difference is what the
 *   container's writes added; a container that was never started has no copy);
 * - each volume labelled with the owner, and each unlabelled (anonymous) volume its containers mount.
 * Containers and volumes without an owner are not capped.
 */
export class OwnerDiskCap {
  /** Each owner's bytes at the last walk. */
  private readonly usage = new Map<string, Usage>();
  /** Each image root's bytes (an image never changes). */
  private readonly imageBytes = new Map<string, Promise<number>>();
  private timer: NodeJS.Timeout | undefined;
  private walking: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly host: DiskCapHost, private readonly maxBytes: number, private readonly intervalMs: number) {
    this.schedule(0);
  }

  /**
   * Refuses (403 naming the cap) `action` when `owner` is over its cap: measured afresh when the
   * last walk found it over (it may have removed something since) or has not seen it yet.
   */
  async admit(owner: string | undefined, action: string): Promise<void> {
    if (owner === undefined) return;
    const last = this.usage.get(owner);
    if (last && !this.over(last)) return;
    const fresh = (await this.measure(new Set([owner]))).get(owner) ?? { bytes: 0 };
    this.usage.set(owner, fresh);
    if (this.over(fresh)) throw new EngineError('Forbidden', `${action}: ${this.refusal(owner, fresh)}; remove some of its containers or volumes first`);
  }

  /** Stops the walks; resolves once the one under way has ended. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.walking;
  }

  private schedule(ms: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.walking = this.check().catch(() => undefined).finally(() => {
        this.walking = undefined;
        this.schedule(this.intervalMs);
      });
    }, ms);
    this.timer.unref();
  }

  /** One walk of every owner: the over ones lose their running containers. */
  private async check(): Promise<void> {
    const containers = await this.host.containers();
    const measured = await this.measure(undefined, containers);
    this.usage.clear();
    for (const [owner, usage] of measured) this.usage.set(owner, usage);
    for (const c of containers) {
      if (this.closed || !c.running || c.owner === undefined) continue;
      const usage = measured.get(c.owner);
      if (usage && this.over(usage)) await this.host.kill(c.id, this.refusal(c.owner, usage)).catch(() => undefined);
    }
  }

  private over(usage: Usage): boolean {
    return usage.unmeasured !== undefined || usage.bytes > this.maxBytes;
  }

  private refusal(owner: string, usage: Usage): string {
    const taken = usage.unmeasured !== undefined ? `hold ${usage.unmeasured}` : `take ${mib(usage.bytes)} (${usage.bytes} bytes)`;
    return `disk cap exceeded: the containers and volumes of ${owner} ${taken}, over the ${mib(this.maxBytes)} allowed per owner (sandboxRuntime option maxOwnerDiskBytes)`;
  }

  /** The usage of `owners` (every owner when undefined), each walked with its own count. */
  private async measure(owners: Set<string> | undefined, known?: DiskCapContainer[]): Promise<Map<string, Usage>> {
    const containers = known ?? await this.host.containers();
    const volumes = await this.host.volumes();
    const byName = new Map(volumes.map((v) => [v.name, v]));
    const trees = new Map<string, { copies: DiskCapContainer[]; volumes: Set<DiskCapVolume> }>();
    const of = (owner: string) => {
      let entry = trees.get(owner);
      if (!entry) trees.set(owner, entry = { copies: [], volumes: new Set() });
      return entry;
    };
    const wanted = (owner: string | undefined): owner is string => owner !== undefined && (!owners || owners.has(owner));
    for (const c of containers) {
      if (!wanted(c.owner)) continue;
      const entry = of(c.owner);
      entry.copies.push(c);
      for (const name of c.volumes) {
        const volume = byName.get(name);
        if (volume && volume.owner === undefined) entry.volumes.add(volume);
      }
    }
    for (const v of volumes) if (wanted(v.owner)) of(v.owner).volumes.add(v);
    const out = new Map<string, Usage>();
    for (const [owner, { copies, volumes: owned }] of trees) {
      if (this.closed) break;
      out.set(owner, await this.ownerUsage(copies, [...owned]));
    }
    return out;
  }

  private async ownerUsage(copies: DiskCapContainer[], volumes: DiskCapVolume[]): Promise<Usage> {
    const count = new BlockCount(MAX_ENTRIES_PER_OWNER, MAX_DEPTH);
    let bytes = 0;
    try {
      for (const c of copies) {
        const writable = this.host.rootfs(c.id);
        const written = await allocatedBytes(writable.path, count);
        if (written > 0) bytes += writable.copy ? Math.max(0, written - await this.imageRoot(c.imageId)) : written;
      }
      for (const v of volumes) bytes += await allocatedBytes(v.path, count);
    } catch (error) {
      if (error instanceof TreeTooLargeError) return { bytes, unmeasured: error.message };
      throw error;
    }
    return { bytes };
  }

  private imageRoot(imageId: string): Promise<number> {
    let bytes = this.imageBytes.get(imageId);
    if (!bytes) {
      bytes = this.host.imageRootfs(imageId)
        .then((root) => (root === undefined ? 0 : allocatedBytes(root, new BlockCount(MAX_IMAGE_ENTRIES, MAX_DEPTH))))
        .catch(() => {
          // Not cached: the store may answer at the next walk.
          this.imageBytes.delete(imageId);
          return 0;
        });
      this.imageBytes.set(imageId, bytes);
    }
    return bytes;
  }
}
