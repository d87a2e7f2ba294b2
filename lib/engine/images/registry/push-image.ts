import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { splitRepositoryName } from '../../../reference/repository-name.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import type { ImageStoreCore } from '../store-core.js';
import type { ImagePushRequest, ImageRecord } from '../image-store-types.js';
import { sha256Of } from '../store/digest.js';
import { repositoryOf, shortId, tagOf } from '../store/references.js';
import { OWN, type LayerBlob } from '../store/layer-blobs.js';
import { decodeRegistryAuth } from './registry-auth.js';
import { RegistrySession } from './registry-session.js';
import { checkedFetch } from '../../../http/checked-fetch.js';
import { blobExists, mountBlob, pushRefusal, startUpload, uploadBlob } from './blob-upload.js';
import { MEDIA, type Descriptor } from './manifests.js';
import { errorLine, layerLine, line } from './progress-lines.js';

/** Layers uploaded at once: dockerd's default `max-concurrent-uploads`. */
const CONCURRENT_UPLOADS = 5;

/** Bytes between two `Pushing` progress lines. */
const PROGRESS_EVERY = 512 * 1024;

type Send = (text: string) => void;
type LayerDescriptor = Omit<Descriptor, 'platform' | 'annotations'>;

/** What one push is about, checked before any output. */
interface PushPlan {
  /** The familiar repository (`127.0.0.1:5000/alice/x`, `busybox`). */
  repo: string;
  host: string;
  /** The repository path at the registry (`alice/x`, `library/busybox`). */
  path: string;
  /** `host/path`, as dockerd names the repository in its first line and its metadata. */
  full: string;
  tags: { tag: string; record: ImageRecord }[];
}

/**
 * Which tags a push sends, as dockerd decides (daemon/images/image_push.go): the `tag` parameter
 * or the name's own tag, else every local tag of the repository. None → 404 `An image does not
 * exist locally with the tag: <repository>` (dockerd's words).
 */
function plan(store: ImageStoreCore, request: ImagePushRequest): PushPlan {
  if (request.name.includes('@') || (request.tag ?? '').includes(':')) throw EngineError.invalidParameter('cannot push a digest reference');
  const parsed = parsePullReference(request.name, request.tag);
  const repo = repositoryOf(parsed.ref);
  const host = splitRepositoryName(repo).domain ?? 'docker.io';
  const explicit = (request.tag !== undefined && request.tag !== '') || tagOf(request.name) !== undefined;
  const refs = explicit
    ? [parsed.ref]
    : store.records().flatMap((r) => r.repoTags).filter((t) => repositoryOf(t) === repo).sort();
  const tags = refs.flatMap((ref) => {
    const record = store.record(ref);
    return record && record.repoTags.includes(ref) ? [{ tag: tagOf(ref) as string, record }] : [];
  });
  if (tags.length === 0) throw EngineError.notFound(`An image does not exist locally with the tag: ${repo}`);
  return { repo, host, path: parsed.path, full: `${host}/${parsed.path}`, tags };
}

/**
 * `docker push`: uploads each tag's layers in their compressed form, then its config and its
 * manifest (Docker image manifest v2 schema 2; OCI when a layer is known only in a form schema 2
 * cannot name), through the same token flow as a pull, asking for `pull,push`. For each layer,
 * as dockerd: a blob the repository already holds is `Layer already exists` (HEAD); one held by
 * another repository of the registry is mounted (`Mounted from <path>`); otherwise it is sent,
 * compressed on the way by the store (layer-blobs.ts) unless the store has its blob. Progress is
 * dockerd's JSON-lines (`Preparing`, `Waiting`, `Pushing`, `Pushed`, `<tag>: digest: … size: …`,
 * the `aux` line the CLI reads); the repository and the image are checked before any output
 * (400, 404), a registry's refusal is the stream's `errorDetail`, as dockerd writes it.
 */
export async function pushImage(store: ImageStoreCore, request: ImagePushRequest): Promise<Readable> {
  const target = plan(store, request);
  const credentials = decodeRegistryAuth(request.registryAuth);
  const out = new PassThrough();
  const send: Send = (text) => {
    if (!out.destroyed && !out.writableEnded) out.write(text);
  };
  const run = async () => {
    send(line({ status: `The push refers to repository [${target.full}]` }));
    for (const { tag, record } of target.tags) {
      const known = await Promise.all(record.layers.map((l) => store.files.blobs.known(l.diffId)));
      // Mounting needs pull on the source repository: asked for in the same token as the push.
      const sources = [...new Set(known.flat().flatMap((b) => b.repositories).filter((r) => r !== target.full && sameRegistry(r, target.host)))];
      const session = new RegistrySession({
        host: target.host, path: target.path, credentials, insecure: store.options.insecureRegistries,
        fetch: request.connectCheck ? checkedFetch(request.connectCheck) : store.options.fetch,
        ...(request.signal ? { signal: request.signal } : {}),
        scopes: [`repository:${target.path}:pull,push`, ...sources.map((r) => `repository:${r.slice(target.host.length + 1)}:pull`)],
      });
      const descriptors = await pushLayers(store, session, target, record, send);
      const configBytes = await readFile(store.blobFile(record.id));
      if (!(await blobExists(session, record.id))) await uploadBlob(session, await startUpload(session), configBytes, async () => record.id);
      const { digest, size } = await putManifest(session, tag, record.id, configBytes.length, descriptors);
      // dockerd lists what it pushed among the image's RepoDigests.
      await store.addRepoDigest(record.id, `${target.repo}@${digest}`);
      send(line({ status: `${tag}: digest: ${digest} size: ${size}` }));
      send(line({ progressDetail: {}, aux: { Tag: tag, Digest: digest, Size: size } }));
    }
  };
  run().then(() => { if (!out.destroyed) out.end(); }, (err: unknown) => {
    let message = err instanceof Error ? err.message : String(err);
    // The token client names the request it answered a challenge for (`Head "…": unauthorized: …`,
    // a pull's words); dockerd's push reports the registry's reason alone.
    if (err instanceof EngineError && err.kind === 'Unauthorized') message = message.replace(/^[A-Z][a-z]+ "[^"]*": /, '');
    if (!out.destroyed) out.end(errorLine(message));
  });
  return out;
}

const sameRegistry = (repository: string, host: string) => repository.startsWith(`${host}/`);

/** Every layer of the image, newest first as dockerd lists them, five at a time; answers their descriptors bottom first. */
async function pushLayers(store: ImageStoreCore, session: RegistrySession, target: PushPlan, record: ImageRecord, send: Send): Promise<LayerDescriptor[]> {
  const unique = [...new Map(record.layers.map((l) => [l.diffId, l])).values()].reverse();
  for (const layer of unique) send(layerLine('Preparing', shortId(layer.diffId)));
  for (const layer of unique.slice(CONCURRENT_UPLOADS)) send(layerLine('Waiting', shortId(layer.diffId)));
  const done = new Map<string, LayerDescriptor>();
  const queue = [...unique];
  const worker = async () => {
    for (let layer = queue.shift(); layer !== undefined; layer = queue.shift()) {
      done.set(layer.diffId, await pushLayer(store, session, target, layer.diffId, layer.size, send));
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_UPLOADS, unique.length) }, worker));
  return record.layers.map((l) => done.get(l.diffId) as LayerDescriptor);
}

async function pushLayer(store: ImageStoreCore, session: RegistrySession, target: PushPlan, diffId: string, size: number, send: Send): Promise<LayerDescriptor> {
  const id = shortId(diffId);
  const blobs = store.files.blobs;
  const known = await blobs.known(diffId);
  const descriptor = (b: Omit<LayerBlob, 'repositories'>): LayerDescriptor => ({ mediaType: b.mediaType, digest: b.digest, size: b.size });
  const found = async (b: LayerBlob, status: string) => {
    await blobs.remember(diffId, b, target.full);
    send(layerLine(status, id));
    return descriptor(b);
  };
  // Known to be in this repository, or in no registry's we know (the store's own blob): is it there?
  for (const b of known.filter((k) => k.repositories.includes(target.full) || k.repositories.includes(OWN))) {
    if (await blobExists(session, b.digest)) return found(b, 'Layer already exists');
  }
  let location: string | undefined;
  for (const b of known) {
    const from = b.repositories.find((r) => r !== target.full && sameRegistry(r, target.host));
    if (!from) continue;
    const path = from.slice(target.host.length + 1);
    const mount = await mountBlob(session, b.digest, path);
    if (mount.mounted) return found(b, `Mounted from ${path}`);
    location = mount.location;
    break;
  }
  location ??= await startUpload(session);
  const own = await blobs.ownBlob(diffId);
  let sent = 0;
  const progress = (current: number, total: number) => {
    if (current - sent < PROGRESS_EVERY && current < total) return;
    sent = current;
    send(layerLine('Pushing', id, { current, total }));
  };
  let blob: Omit<LayerBlob, 'repositories'>;
  if (own) {
    await uploadBlob(session, location, createReadStream(own.file).pipe(meter((n) => progress(n, own.size))), async () => own.digest);
    blob = own;
  } else {
    // dockerd's total is the layer's own size, and its count the uncompressed bytes read, compressing on the way.
    const compressed = blobs.compress(diffId, store.files.layerFile(diffId), (n) => progress(n, size));
    await uploadBlob(session, location, compressed.stream, async () => (await compressed.done).digest);
    blob = await compressed.done;
  }
  return found({ ...blob, repositories: [] }, 'Pushed');
}

/** Counts the bytes going through. */
function meter(onBytes: (total: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, callback: TransformCallback) {
      total += chunk.length;
      onBytes(total);
      callback(null, chunk);
    },
  });
}

/**
 * The manifest, indented with three spaces as dockerd's (its `MarshalIndent`), sent by tag. Docker
 * schema 2 when every layer is gzip (what dockerd pushes); otherwise OCI, whose layer types can
 * name an uncompressed or zstd blob, with the gzip ones under their OCI name.
 */
async function putManifest(session: RegistrySession, tag: string, configDigest: string, configSize: number, layers: LayerDescriptor[]): Promise<{ digest: string; size: number }> {
  const gzip = new Set<string>([MEDIA.dockerLayer, MEDIA.ociLayerGzip]);
  const docker = layers.every((l) => gzip.has(l.mediaType));
  const mediaType = docker ? MEDIA.dockerManifest : MEDIA.ociManifest;
  const body = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType,
    config: { mediaType: docker ? MEDIA.dockerConfig : MEDIA.ociConfig, size: configSize, digest: configDigest },
    layers: layers.map((l) => ({ mediaType: docker ? MEDIA.dockerLayer : l.mediaType === MEDIA.dockerLayer ? MEDIA.ociLayerGzip : l.mediaType, size: l.size, digest: l.digest })),
  }, null, 3));
  const res = await session.send('PUT', `manifests/${tag}`, { headers: { 'Content-Type': mediaType }, body });
  if (res.status !== 201) throw await pushRefusal(res, 'pushing the manifest');
  await res.body?.cancel();
  return { digest: sha256Of(body), size: body.length };
}
