import { stat } from 'node:fs/promises';
import { PassThrough, Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { splitRepositoryName } from '../../../reference/repository-name.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import type { ImageStoreCore } from '../store-core.js';
import type { ImageConfigBlob, ImagePullRequest, StoredLayer } from '../image-store-types.js';
import { HashingStream, isSha256Digest, sha256Of, verifyDigest } from '../store/digest.js';
import { repositoryOf, shortId } from '../store/references.js';
import { ACCEPTED_MANIFESTS, parseManifest, selectManifest, type Descriptor, type ImageManifest } from './manifests.js';
import { formatPlatform, parsePlatform } from '../store/platform.js';
import { decodeRegistryAuth } from './registry-auth.js';
import { pullError, registryErrors } from './registry-errors.js';
import { RegistrySession } from './registry-session.js';
import { checkedFetch } from '../../../http/checked-fetch.js';
import { layerLine, line } from './progress-lines.js';
import { StreamingUnpack } from '../store/stream-unpack.js';
import type { GrowingFile } from '../store/growing-file.js';

const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

/** Reads a small body (manifest, config), refusing more than `limit` bytes. */
async function smallBody(res: Response, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    length += chunk.length;
    if (length > limit) throw EngineError.invalidParameter(`registry answer larger than ${limit} bytes`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

async function refusal(res: Response, ref: string): Promise<EngineError> {
  const body = await res.text().catch(() => '');
  return pullError(ref, res.status, registryErrors(res.status, res.headers.get('www-authenticate'), body));
}

async function fetchManifest(session: RegistrySession, reference: string, ref: string): Promise<{ digest: string; body: Buffer; contentType: string | null }> {
  if (!reference.startsWith('sha256:')) {
    // As dockerd 28 (containerd's resolver): HEAD the tag for its digest, then GET by digest, so
    // the manifest is verified by content. A HEAD has no error body: any other answer falls
    // through to a GET of the tag, whose body carries the registry's reason.
    const head = await session.request('HEAD', `manifests/${reference}`, ACCEPTED_MANIFESTS.join(', '));
    const digest = head.headers.get('docker-content-digest');
    await head.body?.cancel();
    if (head.status === 200 && isSha256Digest(digest)) reference = digest;
  }
  const res = await session.get(`manifests/${reference}`, ACCEPTED_MANIFESTS.join(', '));
  if (res.status !== 200) throw await refusal(res, ref);
  const body = await smallBody(res, MAX_MANIFEST_BYTES);
  const digest = sha256Of(body);
  // Content addressing: a manifest asked for by digest must hash to it (the registry's header is not trusted).
  if (reference.startsWith('sha256:')) verifyDigest('manifest', reference, digest);
  return { digest, body, contentType: res.headers.get('content-type') };
}

/** Writes one progress line unless the client has gone. */
type Send = (text: string) => void;


/**
 * Pulls an image into the store. Everything that can refuse the pull (reference, credentials,
 * registry refusals, manifest and platform selection, the config) happens before the returned
 * stream exists, so those failures are HTTP errors; afterwards progress is streamed the way
 * dockerd writes it (`Pulling fs layer`, `Downloading` with byte counts, `Download complete`,
 * `Extracting`, `Pull complete`, `Digest:`, `Status:`) and a later failure is an `errorDetail`
 * line. Layers stream from the registry to disk while both digests are checked, and a first pull
 * of the image unpacks them on the way (stream-unpack.ts); a failure keeps none of its unpacking.
 */
export async function pullImage(store: ImageStoreCore, request: ImagePullRequest): Promise<Readable> {
  const target = parsePullReference(request.ref);
  const name = repositoryOf(target.ref);
  const host = splitRepositoryName(name).domain ?? 'docker.io';
  let wanted;
  try {
    wanted = parsePlatform(request.platform || store.options.platform, store.options.platform);
  } catch {
    throw EngineError.invalidParameter(`invalid platform: ${request.platform ?? ''}`);
  }
  const session = new RegistrySession({
    host, path: target.path, credentials: decodeRegistryAuth(request.registryAuth), insecure: store.options.insecureRegistries,
    fetch: request.connectCheck ? checkedFetch(request.connectCheck) : store.options.fetch, ...(request.signal ? { signal: request.signal } : {}),
  });
  const top = await fetchManifest(session, target.tagOrDigest, target.ref);
  let manifest = parseManifest(top.body, top.contentType);
  if (manifest.kind === 'index') {
    const chosen = selectManifest(manifest, wanted);
    const inner = await fetchManifest(session, chosen.digest, target.ref);
    manifest = parseManifest(inner.body, inner.contentType);
    if (manifest.kind !== 'manifest') throw EngineError.invalidParameter('invalid manifest: an index inside an index');
  }
  const image: ImageManifest = manifest;
  const configRes = await session.get(`blobs/${image.config.digest}`);
  if (configRes.status !== 200) throw await refusal(configRes, target.ref);
  const configBytes = await smallBody(configRes, MAX_MANIFEST_BYTES);
  verifyDigest('config', image.config.digest, sha256Of(configBytes));
  const config = JSON.parse(configBytes.toString('utf8')) as ImageConfigBlob;
  const diffIds = config.rootfs?.diff_ids ?? [];
  if (diffIds.length !== image.layers.length) throw EngineError.invalidParameter('invalid image: the config and the manifest list different numbers of layers');
  if (request.platform && (config.os !== wanted.os || config.architecture !== wanted.architecture)) {
    throw EngineError.notFound(`image with reference ${target.ref} was found but its platform (${formatPlatform({ os: config.os, architecture: config.architecture, ...(config.variant ? { variant: config.variant } : {}) })}) does not match the specified platform (${formatPlatform(wanted)})`);
  }
  const byDigest = target.tagOrDigest.startsWith('sha256:');
  const repoDigest = `${name}@${top.digest}`;
  const out = new PassThrough();
  // The client may go away mid-pull (the route destroys the stream): the pull still completes, quietly.
  const send: Send = (text) => {
    if (!out.destroyed && !out.writableEnded) out.write(text);
  };
  const run = async () => {
    send(line({ status: `Pulling from ${target.path}`, id: target.tagOrDigest }));
    const existing = store.record(image.config.digest);
    if (existing && (byDigest ? existing.repoDigests.includes(repoDigest) : existing.repoTags.includes(target.ref))) {
      send(line({ status: `Digest: ${top.digest}` }));
      send(line({ status: `Status: Image is up to date for ${target.ref}` }));
      return;
    }
    const layers: StoredLayer[] = [];
    const fresh = new Set<number>();
    for (const [i, diffId] of diffIds.entries()) {
      const stored = await store.files.stored(diffId);
      if (stored) {
        layers[i] = stored;
        // The manifest says which blob holds it in this repository: a later push may find or mount it there.
        const blob = image.layers[i] as Descriptor;
        await store.files.blobs.remember(diffId, { digest: blob.digest, size: blob.size, mediaType: blob.mediaType }, session.repository);
        send(layerLine('Already exists', shortId(image.layers[i]?.digest as string)));
      } else {
        fresh.add(i);
        send(layerLine('Pulling fs layer', shortId(image.layers[i]?.digest as string)));
      }
    }
    // A pull that downloads a layer unpacks while it downloads (stream-unpack.ts): the layers already
    // stored are read from their files in turn, and the root is ready when the last download is.
    const layerId = (index: number) => shortId(image.layers[index]?.digest as string);
    const unpack = fresh.size > 0 && !(await stat(store.files.rootfs(image.config.digest)).catch(() => undefined))
      ? await StreamingUnpack.start(store.files, diffIds, (index) => { if (fresh.has(index)) send(layerLine('Extracting', layerId(index))); }, (index) => { if (fresh.has(index)) send(layerLine('Pull complete', layerId(index))); })
      : undefined;
    for (const i of diffIds.keys()) if (!fresh.has(i)) unpack?.stored(i);
    try {
      // Three downloads at a time, as dockerd's default max-concurrent-downloads. The first failure stops
      // the pull: the queue empties and the downloads under way are aborted, as dockerd cancels them.
      // The pull waits for them to end, so nothing of it goes on after the failure is reported.
      const queue = [...fresh];
      const downloads = new AbortController();
      let failure: { error: unknown } | undefined;
      const worker = async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          try {
            layers[i] = await downloadLayer(store, session, image.layers[i] as Descriptor, diffIds[i] as string, target.ref, send, unpack?.watch(i), downloads.signal);
          } catch (err) {
            failure ??= { error: err };
            queue.length = 0;
            downloads.abort();
            return;
          }
          unpack?.stored(i);
        }
      };
      await Promise.all([worker(), worker(), worker()]);
      if (failure) throw failure.error;
      if (unpack) {
        await unpack.finished();
        await store.commit({ config: configBytes, layers, tags: byDigest ? [] : [target.ref], repoDigest, unpacked: unpack.root });
        send(line({ status: `Digest: ${top.digest}` }));
        send(line({ status: `Status: Downloaded newer image for ${target.ref}` }));
        return;
      }
    } catch (err) {
      await unpack?.discard();
      throw err;
    }
    let current = -1;
    let timer: NodeJS.Timeout | undefined;
    const finish = (index: number) => {
      if (fresh.has(index)) send(layerLine('Pull complete', shortId(image.layers[index]?.digest as string)));
    };
    try {
      await store.commit({
        config: configBytes, layers, tags: byDigest ? [] : [target.ref], repoDigest,
        onLayer: (index, read) => {
          if (current >= 0) finish(current);
          current = index;
          clearInterval(timer);
          if (!fresh.has(index)) return;
          const id = shortId(image.layers[index]?.digest as string);
          const total = layers[index]?.size ?? 0;
          send(layerLine('Extracting', id, { current: 0, total }));
          timer = setInterval(() => send(layerLine('Extracting', id, { current: Math.min(read(), total), total })), 200);
        },
      });
    } finally {
      clearInterval(timer);
    }
    if (current >= 0) finish(current);
    send(line({ status: `Digest: ${top.digest}` }));
    send(line({ status: `Status: Downloaded newer image for ${target.ref}` }));
  };
  run().then(() => { if (!out.destroyed) out.end(); }, (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    if (!out.destroyed) out.end(line({ errorDetail: { message }, error: message }));
  });
  return out;
}

/** Streams one layer blob into the store: compressed digest and size, then diff ID, both verified. */
async function downloadLayer(store: ImageStoreCore, session: RegistrySession, layer: Descriptor, diffId: string, ref: string, send: Send, onFile: ((file: GrowingFile) => void) | undefined, signal: AbortSignal): Promise<StoredLayer> {
  const id = shortId(layer.digest);
  const res = await session.get(`blobs/${layer.digest}`, undefined, signal);
  if (res.status !== 200 || !res.body) throw await refusal(res, ref);
  const hasher = new HashingStream();
  let reported = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      if (hasher.bytes > layer.size) return callback(EngineError.invalidParameter(`layer ${layer.digest} is larger than its manifest says (${layer.size} bytes)`));
      if (hasher.bytes - reported >= 256 * 1024 || hasher.bytes === layer.size) {
        reported = hasher.bytes;
        send(layerLine('Downloading', id, { current: hasher.bytes, total: layer.size }));
      }
      callback(null, chunk);
    },
  });
  const body = Readable.fromWeb(res.body as unknown as WebReadableStream<Uint8Array>);
  body.on('error', (err) => hasher.destroy(err));
  hasher.on('error', (err) => meter.destroy(err));
  // The store reads the error from the stream (errored, or its pipeline); this listener keeps an
  // error that comes before the store listens (an aborted download) from being an uncaught one.
  meter.on('error', () => undefined);
  // The tar is unpacked while it is written (stream-unpack.ts), once the layers before it are.
  const stored = await store.files.importLayer(body.pipe(hasher).pipe(meter), diffId, undefined, onFile);
  send(layerLine('Verifying Checksum', id));
  if (hasher.digest() !== layer.digest) {
    await store.files.discard(diffId);
    // dockerd's words (distribution/pull_v2.go); the temporary unpack goes with the pull (stream-unpack.ts).
    throw EngineError.invalidParameter(`filesystem layer verification failed for digest ${layer.digest}`);
  }
  // A later push of this layer to the same registry finds it there, or mounts it from here (layer-blobs.ts).
  await store.files.blobs.remember(diffId, { digest: layer.digest, size: layer.size, mediaType: layer.mediaType }, session.repository);
  send(layerLine('Download complete', id));
  return stored;
}
