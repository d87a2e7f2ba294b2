import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LoadNameCheck } from '../../../engine-api/image-operations.js';
import type { ImageStoreCore } from '../store-core.js';
import type { StoredLayer } from '../image-store-types.js';
import { HashingStream, sha256Of, verifyDigest } from '../store/digest.js';
import { normalizeRef } from '../store/references.js';
import { parseManifest, selectManifest } from '../registry/manifests.js';
import { parsePlatform } from '../store/platform.js';
import { SpooledArchive } from './spool-archive.js';
import { loadLegacyArchive } from './legacy-archive.js';
import { decompressedLayer } from '../store/decompress.js';
import { byteCap } from '../store/byte-cap.js';

const bad = (why: string) => EngineError.invalidParameter(`invalid image archive: ${why}`);

/** One image found in an archive: where its config and layers are, and its names. */
interface ArchiveImage {
  config: string;
  layers: { file: string; digest?: string }[];
  tags: string[];
}

async function json(spool: SpooledArchive, name: string): Promise<unknown> {
  const file = spool.file(name);
  if (!file) throw bad(`${name} is missing`);
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch {
    throw bad(`${name} is not JSON`);
  }
}

/** docker-archive: `manifest.json` = `[{Config, RepoTags, Layers}]`. */
async function dockerArchiveImages(spool: SpooledArchive): Promise<ArchiveImage[]> {
  const manifest = await json(spool, 'manifest.json');
  if (!Array.isArray(manifest)) throw bad('manifest.json is not a list');
  return manifest.map((entry: Record<string, unknown>, i) => {
    if (typeof entry?.Config !== 'string' || !Array.isArray(entry.Layers) || !entry.Layers.every((l) => typeof l === 'string')) {
      throw bad(`manifest.json entry ${i} needs Config and Layers`);
    }
    const tags = Array.isArray(entry.RepoTags) ? entry.RepoTags.filter((t): t is string => typeof t === 'string') : [];
    return { config: entry.Config, layers: (entry.Layers as string[]).map((file) => ({ file })), tags };
  });
}

/** OCI image layout: `index.json` → manifests (an index inside picks this server's platform) → blobs. */
async function ociLayoutImages(spool: SpooledArchive, platform: string): Promise<ArchiveImage[]> {
  const blob = (digest: string) => `blobs/${digest.replace(':', '/')}`;
  const index = parseManifest(Buffer.from(JSON.stringify(await json(spool, 'index.json'))), null);
  if (index.kind !== 'index') throw bad('index.json is not an index');
  const images: ArchiveImage[] = [];
  for (const descriptor of index.manifests) {
    const annotations = descriptor.annotations ?? {};
    const name = annotations['io.containerd.image.name'] ?? annotations['org.opencontainers.image.ref.name'];
    let body = await readFile(spool.file(blob(descriptor.digest)) ?? '').catch(() => undefined);
    if (!body) throw bad(`blob ${descriptor.digest} is missing`);
    verifyDigest('manifest', descriptor.digest, sha256Of(body));
    let manifest = parseManifest(body, descriptor.mediaType);
    if (manifest.kind === 'index') {
      const chosen = selectManifest(manifest, parsePlatform(platform));
      body = await readFile(spool.file(blob(chosen.digest)) ?? '').catch(() => undefined);
      if (!body) throw bad(`blob ${chosen.digest} is missing`);
      verifyDigest('manifest', chosen.digest, sha256Of(body));
      manifest = parseManifest(body, chosen.mediaType);
      if (manifest.kind !== 'manifest') throw bad('an index inside an index');
    }
    let tags: string[] = [];
    if (name && name.includes(':')) {
      try {
        tags = [normalizeRef(name)];
      } catch {
        tags = [];
      }
    }
    images.push({ config: blob(manifest.config.digest), layers: manifest.layers.map((l) => ({ file: blob(l.digest), digest: l.digest })), tags });
  }
  return images;
}

/** Options of {@link loadArchive}. */
export interface LoadArchiveOptions {
  /** Abandons the load (the client went away). */
  signal?: AbortSignal;
  /** Asked with the names before any tag is written (see {@link LoadNameCheck}). */
  checkNames?: LoadNameCheck;
}

/**
 * `docker load`: reads a docker-archive tarball (or an OCI image layout tarball), spooling it to
 * the store's temporary space since archives put their index at the end, then imports each
 * image with every layer checked against its config's diff IDs (and OCI blobs against their
 * digests). Resolves with dockerd's JSON-lines answer (`Loaded image: <ref>`, or `Loaded image
 * ID: <id>` for an untagged one, and the note dockerd writes when a tag moves). A broken archive
 * is a 400 before any output. Every name of every image is parsed, and handed to `checkNames`,
 * before the first layer is imported: one parse decides what is judged and what is written.
 */
export async function loadArchive(store: ImageStoreCore, archive: Readable, options: LoadArchiveOptions = {}): Promise<Readable> {
  const { signal, checkNames } = options;
  await mkdir(join(store.dir, 'tmp'), { recursive: true });
  const dir = await mkdtemp(join(store.dir, 'tmp', 'load-'));
  const lines: string[] = [];
  const abort = () => archive.destroy(new Error('the client went away'));
  signal?.addEventListener('abort', abort, { once: true });
  try {
    // dockerd also loads a gzipped archive (`docker save | gzip`), told by its magic bytes.
    // The cap bounds the spool on disk too: it counts the uncompressed bytes before they are written.
    const decompressed = await decompressedLayer(archive);
    const capped = decompressed.pipe(byteCap(store.options.maxLoadBytes, 'the image archive', 'maxLoadBytes'));
    decompressed.on('error', (err) => capped.destroy(err));
    const spool = await SpooledArchive.from(capped, dir);
    // The format `docker save` wrote before Docker 1.10 (`repositories` and v1 layer folders), as dockerd still loads it.
    if (!spool.has('manifest.json') && !spool.has('index.json') && spool.has('repositories')) return answer(await loadLegacyArchive(store, spool, checkNames));
    const images = spool.has('manifest.json') ? await dockerArchiveImages(spool) : spool.has('index.json') ? await ociLayoutImages(spool, store.options.platform) : undefined;
    if (!images) throw bad('neither manifest.json nor index.json found');
    const tagged = images.map((image) => ({
      image,
      tags: image.tags.map((t) => {
        try {
          return normalizeRef(t);
        } catch {
          throw bad(`invalid RepoTags entry ${t}`);
        }
      }),
    }));
    await checkNames?.([...new Set(tagged.flatMap(({ tags }) => tags))]);
    for (const { image, tags } of tagged) {
      const configFile = spool.file(image.config);
      if (!configFile) throw bad(`${image.config} is missing`);
      const config = await readFile(configFile);
      let diffIds: string[];
      try {
        diffIds = (JSON.parse(config.toString('utf8')) as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids;
      } catch {
        throw bad(`${image.config} is not an image config`);
      }
      if (!Array.isArray(diffIds) || diffIds.length !== image.layers.length) throw bad(`${image.config} does not list the image's layers`);
      const layers: StoredLayer[] = [];
      for (const [i, layer] of image.layers.entries()) {
        const diffId = diffIds[i] as string;
        const file = spool.file(layer.file);
        if (!file) throw bad(`${layer.file} is missing`);
        const hasher = new HashingStream();
        layers.push((await store.files.stored(diffId)) ?? (await store.files.importLayer(createReadStream(file).pipe(hasher), diffId)));
        if (layer.digest && hasher.bytes > 0) verifyDigest('layer blob', layer.digest, hasher.digest());
      }
      const { id, moved } = await store.commit({ config, layers, tags });
      for (const { ref, from } of moved) lines.push(`The image ${ref} already exists, renaming the old one with ID ${from} to empty string\n`);
      if (tags.length === 0) lines.push(`Loaded image ID: ${id}\n`);
      for (const tag of tags) lines.push(`Loaded image: ${tag}\n`);
    }
  } finally {
    signal?.removeEventListener('abort', abort);
    await rm(dir, { recursive: true, force: true });
  }
  return answer(lines);
}

/** dockerd's answer to a load: each line a JSON message; its stream formatter ends each with CRLF. */
function answer(lines: string[]): Readable {
  return Readable.from([Buffer.from(lines.map((stream) => `${JSON.stringify({ stream })}\r\n`).join(''))]);
}
