import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../fs/atomic-file.js';

/**
 * The classic builder's layer cache: a step's result image by its key, which is what dockerd
 * compares (the parent image, the instruction as it will run: its expanded text, and the build
 * args a RUN sees, and for COPY and ADD a digest of the copied files' content and metadata), and
 * more than dockerd: the owner of the build, and for RUN the proxy args and the RUN container's
 * host config (network mode, extra hosts, limits), which change what the step sees but not its text.
 * Persisted in one JSON file replaced atomically; an entry whose image is gone is ignored. Each
 * image's parent is kept too, so `cachefrom` can limit hits to the chains of the images it names.
 */
export class BuildCache {
  #entries = new Map<string, string>();
  #parents = new Map<string, string>();
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(readonly file: string) {}

  static async open(file: string): Promise<BuildCache> {
    const cache = new BuildCache(file);
    try {
      const body = JSON.parse(await readFile(file, 'utf8')) as { entries?: Record<string, string>; parents?: Record<string, string> };
      cache.#entries = new Map(Object.entries(body.entries ?? {}));
      cache.#parents = new Map(Object.entries(body.parents ?? {}));
    } catch {
      // No cache yet (or an unreadable one): every step runs.
    }
    return cache;
  }

  /**
   * The key of a step (see the class). `owner` keeps one cache per owner: a tenant never reuses a
   * layer another tenant's RUN wrote (through that tenant's proxy, hosts or network).
   */
  static key(owner: string, parent: string, instruction: string, extra = ''): string {
    return createHash('sha256').update(JSON.stringify([owner, parent, instruction, extra])).digest('hex');
  }

  get(key: string): string | undefined {
    return this.#entries.get(key);
  }

  /** The image and its ancestors as the cache knows them (for `cachefrom`). */
  chain(id: string): Set<string> {
    const out = new Set<string>();
    for (let at: string | undefined = id; at !== undefined && !out.has(at); at = this.#parents.get(at)) out.add(at);
    return out;
  }

  put(key: string, parent: string, id: string): Promise<void> {
    this.#entries.set(key, id);
    if (parent !== '') this.#parents.set(id, parent);
    const save = async () => writeFileAtomic(this.file, JSON.stringify({ entries: Object.fromEntries(this.#entries), parents: Object.fromEntries(this.#parents) }));
    const run = this.#queue.then(save, save);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
