import { EngineError } from '../../../engine-api/engine-error.js';
import { isSha256Digest } from '../store/digest.js';
import { formatPlatform, platformMatches, type Platform } from '../store/platform.js';

export const MEDIA = {
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayer: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  dockerForeignLayer: 'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
} as const;

/** The manifest types a pull accepts, in its `Accept` header (schema 1 is not among them, as in dockerd 28). */
export const ACCEPTED_MANIFESTS = [MEDIA.ociIndex, MEDIA.dockerList, MEDIA.ociManifest, MEDIA.dockerManifest];

const LAYER_TYPES = new Set<string>([MEDIA.dockerLayer, MEDIA.ociLayer, MEDIA.ociLayerGzip, MEDIA.ociLayerZstd]);

/** A content descriptor (image-spec descriptor.md). */
export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: Platform;
  annotations?: Record<string, string>;
}

/** An image manifest: its config and layers. */
export interface ImageManifest {
  kind: 'manifest';
  config: Descriptor;
  layers: Descriptor[];
}

/** An index (manifest list): manifests per platform. */
export interface ImageIndexManifest {
  kind: 'index';
  manifests: Descriptor[];
}

const bad = (why: string) => EngineError.invalidParameter(`invalid manifest: ${why}`);

function descriptor(value: unknown, what: string): Descriptor {
  const d = value as Partial<Descriptor> | null;
  if (!d || typeof d !== 'object' || typeof d.mediaType !== 'string' || !isSha256Digest(d.digest) || typeof d.size !== 'number' || d.size < 0) {
    throw bad(`${what} is not a sha256 descriptor`);
  }
  return d as Descriptor;
}

/**
 * Parses a manifest body by its media type (the Content-Type, else the body's `mediaType`):
 * Docker schema 2 and OCI manifests and indexes. Schema 1 and unknown types are refused by name.
 */
export function parseManifest(body: Buffer, contentType: string | null): ImageManifest | ImageIndexManifest {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw bad('not JSON');
  }
  const declared = typeof json.mediaType === 'string' ? json.mediaType : undefined;
  let type = (contentType ?? '').split(';')[0]?.trim() || declared || '';
  // OCI image-spec: mediaType is optional in a manifest; a config field tells a manifest from an index.
  if (type === 'application/json' || type === '') type = declared ?? ('config' in json ? MEDIA.ociManifest : MEDIA.ociIndex);
  if (json.schemaVersion === 1 || type.startsWith('application/vnd.docker.distribution.manifest.v1')) {
    throw EngineError.invalidParameter('Docker image manifest version 2, schema 1 is not supported: push the image again with a current client');
  }
  if (type === MEDIA.ociIndex || type === MEDIA.dockerList) {
    if (!Array.isArray(json.manifests)) throw bad('an index without manifests');
    return { kind: 'index', manifests: json.manifests.map((m, i) => descriptor(m, `manifests[${i}]`)) };
  }
  if (type === MEDIA.ociManifest || type === MEDIA.dockerManifest) {
    if (!Array.isArray(json.layers)) throw bad('a manifest without layers');
    const layers = json.layers.map((l, i) => descriptor(l, `layers[${i}]`));
    for (const layer of layers) {
      if (layer.mediaType === MEDIA.dockerForeignLayer || layer.mediaType.includes('nondistributable')) {
        throw EngineError.notImplemented(`foreign (non-distributable) layers are not supported: ${layer.mediaType}`);
      }
      if (!LAYER_TYPES.has(layer.mediaType)) throw EngineError.notImplemented(`layer media type ${layer.mediaType} is not supported`);
    }
    return { kind: 'manifest', config: descriptor(json.config, 'config'), layers };
  }
  throw EngineError.invalidParameter(`unsupported manifest media type: ${type}`);
}

/**
 * The index entry for a platform, as dockerd picks it: the first entry whose os and architecture
 * (and variant, when one is wanted) match; attestation manifests (`unknown/unknown`) never match.
 * None → 404 `no matching manifest for <platform> in the manifest list entries` (dockerd's words).
 */
export function selectManifest(index: ImageIndexManifest, wanted: Platform): Descriptor {
  const found = index.manifests.find((m) => (m.mediaType === MEDIA.ociManifest || m.mediaType === MEDIA.dockerManifest) && platformMatches(m.platform, wanted));
  if (!found) throw EngineError.notFound(`no matching manifest for ${formatPlatform(wanted)} in the manifest list entries`);
  return found;
}
