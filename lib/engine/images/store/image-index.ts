import { readFile } from 'node:fs/promises';
import type { ImageRecord } from '../image-store-types.js';
import { writeFileAtomic } from '../../../fs/atomic-file.js';
import { idPrefixOf } from './references.js';

/**
 * The repositories/tags index: every image record, persisted as one JSON file replaced
 * atomically after each change, so the store reads back exactly what was last committed.
 */
export class ImageIndex {
  readonly #file: string;
  readonly #images = new Map<string, ImageRecord>();

  private constructor(file: string) {
    this.#file = file;
  }

  static async load(file: string): Promise<ImageIndex> {
    const index = new ImageIndex(file);
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text !== undefined) {
      const body = JSON.parse(text) as { images?: ImageRecord[] };
      for (const record of body.images ?? []) index.#images.set(record.id, record);
    }
    return index;
  }

  all(): ImageRecord[] {
    return [...this.#images.values()];
  }

  get(id: string): ImageRecord | undefined {
    return this.#images.get(id);
  }

  byTag(ref: string): ImageRecord | undefined {
    return this.all().find((r) => r.repoTags.includes(ref) || r.repoDigests.includes(ref));
  }

  /** By tag or digest reference first, then by unique ID prefix (dockerd's order); ambiguous → undefined. */
  find(ref: string): ImageRecord | undefined {
    const tagged = this.byTag(ref);
    if (tagged) return tagged;
    const prefix = idPrefixOf(ref);
    if (prefix === undefined) return undefined;
    const matches = this.all().filter((r) => r.id.startsWith(`sha256:${prefix}`));
    return matches.length === 1 ? matches[0] : undefined;
  }

  put(record: ImageRecord): void {
    this.#images.set(record.id, record);
  }

  delete(id: string): void {
    this.#images.delete(id);
  }

  /** Moves `ref` to image `id`; answers the image it was taken from, if any. */
  setTag(ref: string, id: string, when: string): ImageRecord | undefined {
    let previous: ImageRecord | undefined;
    for (const record of this.#images.values()) {
      if (record.id !== id && record.repoTags.includes(ref)) {
        record.repoTags = record.repoTags.filter((t) => t !== ref);
        previous = record;
      }
    }
    const target = this.#images.get(id);
    if (target && !target.repoTags.includes(ref)) {
      target.repoTags.push(ref);
      target.lastTagTime = when;
    }
    return previous;
  }

  save(): Promise<void> {
    return writeFileAtomic(this.#file, `${JSON.stringify({ images: this.all() }, null, 1)}\n`);
  }
}
