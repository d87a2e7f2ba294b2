import { runOffLoop } from '../linux/off-loop-command.js';
import { chmod, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { EngineError } from '../../engine-api/engine-error.js';
import { loadArchive, type LoadArchiveOptions } from './archive/load-archive.js';
import { saveArchive } from './archive/save-archive.js';
import type {
  IdShift, ImageConfigBlob, ImageDeleteEntry, ImagePruneResult, ImagePullRequest, ImagePushRequest, ImageRecord, ImageRemoveOptions,
  ImageStoreApi, ImageStoreOptions, ResolvedImage, StoredLayer,
} from './image-store-types.js';
import { pullImage } from './registry/pull-image.js';
import { pushImage } from './registry/push-image.js';
import { registryLogin, type RegistryLoginRequest, type RegistryLoginResult } from './registry/registry-login.js';
import { resolveStoreOptions, type ResolvedStoreOptions } from './store-options.js';
import type { CommitRequest, ImageStoreCore } from './store-core.js';
import { buildBusyboxSeed } from './store/busybox-seed.js';
import { importImage, type ImageImportOptions } from './store/import-image.js';
import { chainIds } from './store/chain-id.js';
import { writeFileAtomic } from '../../fs/atomic-file.js';
import { checkedFetch, type ConnectCheck } from '../../http/checked-fetch.js';
import { digestHex, isSha256Digest, sha256Of } from './store/digest.js';
import { ImageIndex } from './store/image-index.js';
import { LayerFiles } from './store/layer-files.js';
import { writeLayer, type LayerEntry } from './store/layer-writer.js';
import { buildShiftedRootfs, shiftedDir } from './store/shifted-rootfs.js';
import { normalizeRef } from './store/references.js';
import { planRemoval } from './store/removal-plan.js';
import { historyView, inspectView, listView } from './store/views.js';
import { danglingFilter, imageMatches, LIST_FILTERS, PRUNE_FILTERS } from './store/image-filters.js';
import type { EngineFilters } from '../../engine-api/filters.js';

/** Whether shifted roots are overlay layers of the owners alone (mounting them needs root; shifted-rootfs.ts). */
const SHIFT_LAYERS = process.getuid?.() === 0;

/**
 * A content-addressed image store in a state directory:
 * `blobs/sha256/<hex>` (image configs; the ID is the config's digest), `layers/<diffhex>.tar`
 * (uncompressed layer tars, named by the digest they were verified against), `rootfs/<idhex>/`
 * (each image's layers unpacked in order, whiteouts applied) and `images.json` (the
 * repositories/tags index, replaced atomically). Everything is verified on the way in; the
 * unpacked roots are never changed after they are renamed into place, so containers run on
 * copies ({@link materialize}).
 *
 * @example
 * const store = await ImageStore.open('/var/lib/dockgate/images');
 * await store.seedBusybox(['busybox:latest', 'alpine:latest']);
 * const image = await store.resolve('busybox'); // { id, config, rootfs }
 * await store.materialize(image!.id, '/var/lib/dockgate/containers/abc/rootfs');
 */
export type { CommitRequest } from './store-core.js';

/** The one id a rootless store's roots may hold (container root: the server's own user). */
const ONLY_ROOT = { uid: 0, gid: 0, size: 1 };

export class ImageStore implements ImageStoreApi, ImageStoreCore {
  readonly dir: string;
  readonly options: ResolvedStoreOptions;
  readonly files: LayerFiles;
  readonly #index: ImageIndex;
  /** Shifted roots being built, by target directory (imageRootfs). */
  readonly #shifting = new Map<string, Promise<string>>();
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(dir: string, index: ImageIndex, options: ResolvedStoreOptions) {
    this.dir = dir;
    this.#index = index;
    this.options = options;
    this.files = new LayerFiles(join(dir, 'layers'), join(dir, 'rootfs'), options.maxLayerBytes, options.onlyRootOwners ? ONLY_ROOT : undefined, options.namespaceOwners);
  }

  /** Opens (creating when needed) the store in `dir`, reading back its index. */
  static async open(dir: string, options: ImageStoreOptions = {}): Promise<ImageStore> {
    if (typeof dir !== 'string' || dir === '') throw new TypeError('"dir" must be the image store directory');
    const resolved = resolveStoreOptions(options);
    await mkdir(join(dir, 'blobs', 'sha256'), { recursive: true });
    for (const sub of ['layers', 'rootfs']) await mkdir(join(dir, sub), { recursive: true });
    // Only root may traverse the store (made so even when it already exists): the unpacked
    // roots hold whatever files images bring, and no host user is to reach them.
    for (const sub of ['', 'blobs', join('blobs', 'sha256'), 'layers', 'rootfs']) await chmod(join(dir, sub), 0o700);
    // Leftovers of an interrupted write (temporary names, spooled archives) are never part of the store.
    await rm(join(dir, 'tmp'), { recursive: true, force: true });
    for (const sub of ['layers', 'rootfs', join('blobs', 'sha256')]) {
      for (const name of await readdir(join(dir, sub))) {
        if (!name.startsWith('.tmp-')) continue;
        // A rootless store's half-made root may hold files of its namespace's ids: removed there first.
        await resolved.namespaceOwners?.run(['rm', '-rf', '--', join(dir, sub, name)]);
        await rm(join(dir, sub, name), { recursive: true, force: true });
      }
    }
    return new ImageStore(dir, await ImageIndex.load(join(dir, 'images.json')), resolved);
  }

  /** Runs index mutations one at a time. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  blobFile(digest: string): string {
    return join(this.dir, 'blobs', 'sha256', digestHex(digest));
  }

  /** The record for a reference, ID or unique ID prefix. */
  record(ref: string): ImageRecord | undefined {
    const found = this.#index.find(ref);
    if (found) return found;
    try {
      return this.#index.byTag(normalizeRef(ref));
    } catch {
      return undefined;
    }
  }

  /** The record or dockerd's 404 `No such image: <ref>`. */
  recordOrThrow(ref: string): ImageRecord {
    const found = this.record(ref);
    if (!found) throw EngineError.notFound(`No such image: ${ref}`);
    return found;
  }

  records(): ImageRecord[] {
    return this.#index.all();
  }

  async config(id: string): Promise<ImageConfigBlob> {
    return JSON.parse(await readFile(this.blobFile(id), 'utf8')) as ImageConfigBlob;
  }

  async resolve(ref: string): Promise<ResolvedImage | undefined> {
    const record = this.record(ref);
    if (!record) return undefined;
    const config = await this.config(record.id);
    const rootfs = await this.#rootfs(record.id, config.rootfs.diff_ids);
    return { id: record.id, ref: record.repoTags.find((t) => t === ref || t === safeNormalize(ref)) ?? record.id, config, rootfs };
  }

  /**
   * Gives a container its own writable copy of the image's root filesystem: `cp -a
   * --reflink=auto` (a copy-on-write clone on btrfs/xfs, a plain copy elsewhere), keeping owners,
   * modes, links and times. `destDir` must not exist yet.
   */
  /**
   * The image's own unpacked root filesystem (built once, shared, never to be written). With
   * `shift`, the one prepared for that range: on a root server an overlay layer of the owners
   * alone, to stack on the plain root (`lowerdir=shifted:plain`, shifted-rootfs.ts), not a tree
   * to read on its own.
   */
  /** Resolves once no image tree is being prepared (the background builds for a range: their temporary mounts gone). */
  async settled(): Promise<void> {
    while (this.#shifting.size > 0) await Promise.allSettled([...this.#shifting.values()]);
  }

  async imageRootfs(imageId: string, shift?: IdShift): Promise<string> {
    const record = this.recordOrThrow(imageId);
    const diffIds = (await this.config(record.id)).rootfs.diff_ids;
    const plain = await this.#rootfs(record.id, diffIds);
    if (!shift) return plain;
    const target = join(shiftedDir(this.dir, shift), digestHex(record.id));
    if (await stat(target).catch(() => undefined)) return target;
    // One build per image and range at a time: a start while it is prepared in the background waits for it.
    let building = this.#shifting.get(target);
    if (!building) {
      building = (async () => {
        // A root server makes an overlay layer of the owners alone (stacked on the plain tree, shifted-rootfs.ts).
        if (SHIFT_LAYERS) return buildShiftedRootfs(plain, target, shift, { layer: true });
        // Else a built image's parent has its shifted copy already: linked, and the new layers
        // applied with shifted owners, instead of a whole copy with every owner changed.
        const base = await this.#base(record.id, diffIds, (id) => join(shiftedDir(this.dir, shift), digestHex(id)));
        if (base) return this.files.buildRootfs(record.id, diffIds, undefined, base, { target, shift });
        return buildShiftedRootfs(plain, target, shift);
      })().finally(() => this.#shifting.delete(target));
      this.#shifting.set(target, building);
    }
    return building;
  }

  async materialize(imageId: string, destDir: string, shift?: IdShift): Promise<void> {
    const source = await this.imageRootfs(imageId, shift);
    if (await stat(destDir).catch(() => undefined)) throw EngineError.conflict(`${destDir} already exists`);
    // Off the event loop: a start makes one of these (or its spare does), and a spawn holds the calling thread.
    // A rootless store's roots hold files of its namespace's ids: copied there, by its root.
    const ns = this.options.namespaceOwners;
    if (ns) return ns.run(['cp', '-a', '--reflink=auto', '--', source, destDir]);
    const copied = await runOffLoop('cp', ['-a', '--reflink=auto', '--', source, destDir]);
    if (copied.code !== 0) throw EngineError.system(`copying the image's root filesystem failed: ${copied.stderr.trim()}`);
  }

  /**
   * Records an image whose layers are stored: checks the config against its layers, writes the
   * config blob, unpacks the root filesystem, then points the tags at it. Answers the ID and the
   * images that lost a tag to it.
   */
  async commit(request: CommitRequest): Promise<{ id: string; moved: { ref: string; from: string }[] }> {
    const id = sha256Of(request.config);
    let config: ImageConfigBlob;
    try {
      config = JSON.parse(request.config.toString('utf8')) as ImageConfigBlob;
    } catch {
      throw EngineError.invalidParameter('invalid image config: not JSON');
    }
    const diffIds = config.rootfs?.diff_ids;
    if (!Array.isArray(diffIds) || !diffIds.every(isSha256Digest)) throw EngineError.invalidParameter('invalid image config: rootfs.diff_ids');
    if (diffIds.length !== request.layers.length || diffIds.some((d, i) => request.layers[i]?.diffId !== d)) {
      throw EngineError.invalidParameter('image config does not match its layers (rootfs.diff_ids)');
    }
    await writeFileAtomic(this.blobFile(id), request.config);
    // A built image's root is unpacked when first run (from its parent's), not at each step.
    if (request.unpacked) await this.files.adoptRootfs(id, request.unpacked);
    else if (!request.lazyRootfs) await this.#rootfs(id, diffIds, request.onLayer);
    const committed = await this.exclusive(async () => {
      const now = new Date().toISOString();
      const record = this.#index.get(id) ?? { id, repoTags: [], repoDigests: [], layers: request.layers, ...(request.parent ? { parent: request.parent } : {}) };
      if (request.repoDigest && !record.repoDigests.includes(request.repoDigest)) record.repoDigests.push(request.repoDigest);
      this.#index.put(record);
      const moved: { ref: string; from: string }[] = [];
      for (const tag of request.tags) {
        const previous = this.#index.setTag(tag, id, now);
        if (previous) moved.push({ ref: tag, from: previous.id });
      }
      await this.#index.save();
      return { id, moved };
    });
    // Its root for the ranges containers will run on, made while the client goes on (imageRootfs).
    if (!request.lazyRootfs) for (const shift of this.options.prepareShifts()) void this.imageRootfs(id, shift).catch(() => undefined);
    return committed;
  }

  addRepoDigest(id: string, repoDigest: string): Promise<void> {
    return this.exclusive(async () => {
      const record = this.#index.get(id);
      if (!record || record.repoDigests.includes(repoDigest)) return;
      record.repoDigests.push(repoDigest);
      this.#index.put(record);
      await this.#index.save();
    });
  }

  /**
   * The image's unpacked root, built once: from the unpacked root of the image whose layers are
   * the longest prefix of its own (a built image's parent) when there is one, else from scratch.
   */
  async #rootfs(id: string, diffIds: readonly string[], onLayer?: (index: number, read: () => number) => void): Promise<string> {
    const ready = this.files.rootfs(id);
    if (await stat(ready).catch(() => undefined)) return ready;
    return this.files.buildRootfs(id, diffIds, onLayer, await this.#base(id, diffIds, (other) => this.files.rootfs(other)));
  }

  /** The unpacked root (found by `rootOf`) of the image whose layers are the longest prefix of `diffIds`. */
  async #base(id: string, diffIds: readonly string[], rootOf: (id: string) => string): Promise<{ rootfs: string; layers: number } | undefined> {
    let base: { rootfs: string; layers: number } | undefined;
    for (const record of this.#index.all()) {
      const layers = record.layers.map((l) => l.diffId);
      if (record.id === id || layers.length > diffIds.length || layers.length <= (base?.layers ?? 0)) continue;
      if (!layers.every((d, i) => diffIds[i] === d)) continue;
      const rootfs = rootOf(record.id);
      if (await stat(rootfs).catch(() => undefined)) base = { rootfs, layers: layers.length };
    }
    return base;
  }

  /**
   * Stores a new layer made of `entries` (a commit's changes, a build's COPY). Its gzip form is
   * made by the first push that needs it (layer-blobs.ts), not here: a build does not wait for it.
   */
  storeLayer(entries: AsyncIterable<LayerEntry> | Iterable<LayerEntry>): Promise<StoredLayer> {
    return writeLayer(this.files, entries);
  }

  /**
   * Records a new image (a commit or a build step): its config, whose `rootfs.diff_ids` are its
   * layers' (all stored), and the tags to point at it. Its root is unpacked when first run.
   * Answers the image ID (the config's digest).
   */
  async createImage(config: ImageConfigBlob, tags: string[] = [], parent?: string): Promise<string> {
    const layers: StoredLayer[] = [];
    for (const diffId of config.rootfs.diff_ids) {
      const layer = await this.files.stored(diffId);
      if (!layer) throw EngineError.system(`layer ${diffId} is missing from the image store`);
      layers.push(layer);
    }
    const { id } = await this.commit({ config: Buffer.from(JSON.stringify(config)), layers, tags: tags.map(normalizeRef), lazyRootfs: true, ...(parent ? { parent } : {}) });
    return id;
  }

  seedBusybox(tags: string[] = ['busybox:latest']): Promise<string> {
    return buildBusyboxSeed(this, tags.map(normalizeRef));
  }

  pull(request: ImagePullRequest): Promise<Readable> {
    return pullImage(this, request);
  }

  push(request: ImagePushRequest): Promise<Readable> {
    return pushImage(this, request);
  }

  login(request: RegistryLoginRequest, options: { connectCheck?: ConnectCheck } = {}): Promise<RegistryLoginResult> {
    return registryLogin(request, this.options.insecureRegistries, options.connectCheck ? checkedFetch(options.connectCheck) : this.options.fetch);
  }

  load(archive: Readable, options: LoadArchiveOptions = {}): Promise<Readable> {
    return loadArchive(this, archive, options);
  }

  /** `docker import`: the tar as the one layer of a new image (import-image.ts); answers its ID. */
  import(tar: Readable, options: ImageImportOptions): Promise<string> {
    return importImage(this, tar, { ...options, tags: options.tags.map(normalizeRef) });
  }

  save(refs: string[], signal?: AbortSignal): Promise<Readable> {
    return saveArchive(this, refs, signal);
  }

  async tag(source: string, repo: string, tag = 'latest'): Promise<void> {
    const record = this.recordOrThrow(source);
    const ref = normalizeRef(`${repo}:${tag}`);
    return this.exclusive(async () => {
      this.#index.setTag(ref, record.id, new Date().toISOString());
      await this.#index.save();
    });
  }

  /**
   * `docker rmi`, as dockerd decides (daemon/images/image_delete.go): a tag of an image with other
   * references is only untagged; the last reference, or an ID, deletes the image unless a
   * container uses it (a running one: never; a stopped one: only with `force`); an ID of an image
   * in several repositories needs `force`.
   */
  remove(ref: string, options: ImageRemoveOptions = {}): Promise<ImageDeleteEntry[]> {
    return this.exclusive(async () => {
      const record = this.recordOrThrow(ref);
      const plan = planRemoval(record, safeNormalize(ref), options.force ?? false, this.options.usage(record.id), ref);
      record.repoTags = record.repoTags.filter((t) => !plan.untag.includes(t));
      record.repoDigests = record.repoDigests.filter((d) => !plan.untag.includes(d));
      const entries: ImageDeleteEntry[] = plan.untag.map((name) => ({ Untagged: name }));
      if (plan.deleteImage) entries.push(...(await this.#deleteImage(record)));
      else await this.#index.save();
      return entries;
    });
  }

  /**
   * `docker image prune`: unused images matching the filters (`dangling`, default true: only
   * untagged ones; `until`, `label`, `label!`). An image a container uses is never pruned.
   */
  prune(filters: EngineFilters = new Map()): Promise<ImagePruneResult> {
    for (const key of filters.keys()) if (!(PRUNE_FILTERS as readonly string[]).includes(key)) throw EngineError.invalidParameter(`Invalid filter '${key}'`);
    const effective = new Map(filters);
    if (danglingFilter(filters) === undefined) effective.set('dangling', new Set(['true']));
    if (danglingFilter(filters) === false) effective.delete('dangling');
    return this.exclusive(async () => {
      const deleted: ImageDeleteEntry[] = [];
      let reclaimed = 0;
      for (const record of this.#index.all()) {
        if (!imageMatches({ record, config: await this.config(record.id) }, effective, () => undefined)) continue;
        if (this.options.usage(record.id).length > 0) continue;
        // A parent of another image (a build's intermediate step) goes with its child, as in dockerd.
        if (this.#index.all().some((r) => r.parent === record.id)) continue;
        for (const name of [...record.repoTags, ...record.repoDigests]) deleted.push({ Untagged: name });
        reclaimed += record.layers.reduce((sum, l) => sum + l.size, 0);
        deleted.push(...(await this.#deleteImage(record)));
      }
      return { ImagesDeleted: deleted.length > 0 ? deleted : null, SpaceReclaimed: reclaimed };
    });
  }

  /** Drops the record, its root filesystem and the layers no other image uses (index saved). */
  async #deleteImage(record: ImageRecord): Promise<ImageDeleteEntry[]> {
    this.#index.delete(record.id);
    await this.#index.save();
    // Its unpacked trees, with its copies prepared for user namespace ranges (shifted-rootfs.ts);
    // kept while a container still runs on them (a forced rmi: their overlays' lower layer).
    if (this.options.usage(record.id).length === 0) {
      // A rootless store's root holds files of its namespace's ids, which only its root may remove.
      if (this.options.namespaceOwners) await this.options.namespaceOwners.run(['rm', '-rf', '--', this.files.rootfs(record.id)]);
      await rm(this.files.rootfs(record.id), { recursive: true, force: true });
      for (const name of await readdir(this.dir).catch(() => [] as string[])) {
        if (name.startsWith('rootfs-')) await rm(join(this.dir, name, digestHex(record.id)), { recursive: true, force: true });
      }
    }
    await rm(this.blobFile(record.id), { force: true });
    const entries: ImageDeleteEntry[] = [{ Deleted: record.id }];
    const inUse = new Set(this.#index.all().flatMap((r) => r.layers.map((l) => l.diffId)));
    const chains = chainIds(record.layers.map((l) => l.diffId));
    for (const [i, layer] of record.layers.entries()) {
      if (inUse.has(layer.diffId)) continue;
      await this.files.discard(layer.diffId);
      entries.push({ Deleted: chains[i] as string });
    }
    return entries;
  }

  /** `GET /images/json` body, filtered (`dangling`, `label`, `reference`, `before`, `since`, `until`). */
  async list(filters: EngineFilters = new Map(), all = false): Promise<Record<string, unknown>[]> {
    for (const key of filters.keys()) if (!(LIST_FILTERS as readonly string[]).includes(key)) throw EngineError.invalidParameter(`Invalid filter '${key}'`);
    const subjects = await Promise.all(this.#index.all().map(async (record) => ({ record, config: await this.config(record.id) })));
    const find = (ref: string) => subjects.find((s) => s.record.id === this.record(ref)?.id);
    const parents = new Set(this.#index.all().map((r) => r.parent).filter((p): p is string => p !== undefined));
    const intermediate = (s: { record: ImageRecord }) => !all && s.record.repoTags.length === 0 && parents.has(s.record.id);
    return subjects.filter((s) => !intermediate(s) && imageMatches(s, filters, find)).map((s) => listView(s.record, s.config));
  }

  async inspect(ref: string): Promise<Record<string, unknown>> {
    const record = this.recordOrThrow(ref);
    return inspectView(record, await this.config(record.id));
  }

  async history(ref: string): Promise<Record<string, unknown>[]> {
    const record = this.recordOrThrow(ref);
    const sizes = await Promise.all(record.layers.map((l) => this.files.contentSize(l.diffId).catch(() => l.size)));
    return historyView(record, await this.config(record.id), sizes);
  }
}

function safeNormalize(ref: string): string | undefined {
  try {
    return normalizeRef(ref);
  } catch {
    return undefined;
  }
}
