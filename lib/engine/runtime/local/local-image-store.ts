import { EngineError } from '../../../engine-api/engine-error.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type { ImageDeleteItem, ImagePruneReport } from '../../../engine-api/image-operations.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import { labelMatches } from './label-filter.js';
import type { LocalImage } from './local-container.js';

/** Who uses an image, for dockerd's removal conflicts. */
export interface ImageUser {
  id: string;
  imageId: string;
  running: boolean;
}

/**
 * The images of a local runtime: the host's configured ones plus tags added with
 * `docker tag`, by familiar reference. A reference is resolved as dockerd does
 * (daemon/images GetImage): a reference, then a full `sha256:` id, then a unique id prefix.
 * Removing a reference hides it, even one a `name:*` entry would otherwise serve.
 */
export class LocalImageStore {
  private readonly tags = new Map<string, LocalImage>();
  private readonly removed = new Set<string>();

  constructor(
    configured: readonly LocalImage[],
    private readonly lookup: (ref: string) => LocalImage | undefined,
  ) {
    for (const image of configured) this.tags.set(image.ref, image);
  }

  /** The image for a reference or id, or undefined. */
  find(ref: string): LocalImage | undefined {
    return this.locate(ref)?.image;
  }

  /** The image and whether it was named by id (a full `sha256:` id or a hex prefix no tag has). */
  private locate(ref: string): { image: LocalImage; byId: boolean } | undefined {
    const trimmed = ref.trim();
    if (trimmed === '') return undefined;
    if (trimmed.startsWith('sha256:')) {
      const image = this.findById(trimmed.slice('sha256:'.length));
      return image ? { image, byId: true } : undefined;
    }
    const familiar = safeFamiliar(trimmed);
    const tagged = this.tags.get(familiar);
    if (tagged) return { image: tagged, byId: false };
    if (/^[0-9a-f]{1,64}$/.test(trimmed)) {
      const image = this.findById(trimmed);
      if (image) return { image, byId: true };
    }
    if (this.removed.has(familiar)) return undefined;
    const served = this.lookup(familiar);
    if (!served) return undefined;
    this.tags.set(familiar, served);
    return { image: served, byId: false };
  }

  /** Like {@link find}, 404 `No such image: <ref>` when unknown. */
  resolve(ref: string): LocalImage {
    const image = this.find(ref);
    if (!image) throw EngineError.notFound(`No such image: ${ref}`);
    return image;
  }

  /** Every distinct image with its references. */
  all(): { image: LocalImage; refs: string[] }[] {
    const byId = new Map<string, { image: LocalImage; refs: string[] }>();
    for (const [ref, image] of this.tags) {
      const entry = byId.get(image.id) ?? { image, refs: [] };
      entry.refs.push(ref);
      byId.set(image.id, entry);
    }
    return [...byId.values()];
  }

  refsOf(id: string): string[] {
    return [...this.tags].filter(([, image]) => image.id === id).map(([ref]) => ref);
  }

  tag(ref: string, target: string): void {
    const image = this.resolve(ref);
    this.removed.delete(target);
    this.tags.set(target, image);
  }

  /**
   * `docker rmi`, with dockerd's conflicts (daemon/images/image_delete.go): an image in
   * use by a running container cannot be removed even with force; in use by a stopped one, or
   * tagged in several repositories and named by id, needs force.
   */
  remove(ref: string, force: boolean, users: ImageUser[]): ImageDeleteItem[] {
    const found = this.locate(ref);
    if (!found) throw EngineError.notFound(`No such image: ${ref}`);
    const { image, byId } = found;
    const short = image.id.replace(/^sha256:/, '').slice(0, 12);
    const refs = this.refsOf(image.id);
    const using = users.filter((u) => u.imageId === image.id);
    if (!byId) {
      const familiar = safeFamiliar(ref);
      const last = refs.length <= 1;
      const user = using[0];
      if (last && user && !force) {
        throw EngineError.conflict(
          `conflict: unable to remove repository reference "${ref}" (must force) - container ${user.id.slice(0, 12)} is using its referenced image ${short}`,
        );
      }
      this.untag(familiar);
      const out: ImageDeleteItem[] = [{ Untagged: familiar }];
      if (last && using.length === 0) out.push({ Deleted: image.id });
      return out;
    }
    const running = using.find((u) => u.running);
    if (running) {
      throw EngineError.conflict(`conflict: unable to delete ${short} (cannot be forced) - image is being used by running container ${running.id.slice(0, 12)}`);
    }
    if (!force && refs.length > 1) throw EngineError.conflict(`conflict: unable to delete ${short} (must be forced) - image is referenced in multiple repositories`);
    const stopped = using[0];
    if (!force && stopped) throw EngineError.conflict(`conflict: unable to delete ${short} (must be forced) - image is being used by stopped container ${stopped.id.slice(0, 12)}`);
    // Forced past a stopped container, dockerd deletes the image all the same (the container keeps what it runs).
    for (const r of refs) this.untag(r);
    return [...refs.map((r) => ({ Untagged: r })), { Deleted: image.id }];
  }

  /** `POST /images/prune`: local images always carry a reference, so only `dangling=false` removes (unused) ones. */
  prune(filters: EngineFilters, users: ImageUser[], sizeOf: (image: LocalImage) => number): ImagePruneReport {
    const dangling = filters.get('dangling');
    const onlyDangling = !dangling || [...dangling].some((v) => v === 'true' || v === '1');
    const deleted: ImageDeleteItem[] = [];
    let reclaimed = 0;
    if (!onlyDangling) {
      for (const { image, refs } of this.all()) {
        if (users.some((u) => u.imageId === image.id)) continue;
        if (!matchesLabels(filters, image) || !createdBefore(filters, image)) continue;
        for (const r of refs) {
          this.untag(r);
          deleted.push({ Untagged: r });
        }
        deleted.push({ Deleted: image.id });
        reclaimed += sizeOf(image);
      }
    }
    return { ImagesDeleted: deleted.length > 0 ? deleted : null, SpaceReclaimed: reclaimed };
  }

  private untag(ref: string): void {
    this.tags.delete(ref);
    this.removed.add(ref);
  }

  private findById(hex: string): LocalImage | undefined {
    if (!/^[0-9a-f]{1,64}$/.test(hex)) return undefined;
    const images = [...new Set(this.tags.values())].filter((i) => i.id.slice('sha256:'.length).startsWith(hex));
    const ids = new Set(images.map((i) => i.id));
    if (ids.size > 1) throw EngineError.invalidParameter(`multiple IDs found with provided prefix: ${hex}`);
    return images[0];
  }
}

function safeFamiliar(ref: string): string {
  try {
    return familiarImageRef(ref);
  } catch {
    return ref;
  }
}

function matchesLabels(filters: EngineFilters, image: LocalImage): boolean {
  const labels = filters.get('label');
  return !labels || [...labels].every((l) => labelMatches(image.labels ?? {}, l));
}

function createdBefore(filters: EngineFilters, image: LocalImage): boolean {
  const until = filters.get('until');
  if (!until || until.size === 0) return true;
  const limit = Math.min(...[...until].map((v) => untilMs(v)));
  return (image.created?.getTime() ?? 0) < limit;
}

/** `until`: a Unix timestamp, an RFC 3339 date, or a Go duration before now (`24h`, `10m`). */
function untilMs(value: string): number {
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const duration = /^(\d+)(h|m|s)$/.exec(value);
  if (duration) return Date.now() - Number(duration[1]) * { h: 3_600_000, m: 60_000, s: 1000 }[duration[2] as 'h' | 'm' | 's'];
  const date = Date.parse(value);
  if (Number.isNaN(date)) throw EngineError.invalidParameter(`invalid filter 'until=${value}'`);
  return date;
}
