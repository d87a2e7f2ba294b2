import type { ContainerRuntime } from '../../engine-api/runtime-types.js';
import type { ImageConfigBlob, ImageStoreApi, StoredLayer } from '../images/image-store-types.js';
import type { LayerEntry } from '../images/store/layer-writer.js';
import type { BuildCache } from './build-cache.js';

/** The image store operations a build writes with (ImageStore has them all). */
export interface BuildStore extends Pick<ImageStoreApi, 'resolve'> {
  /** The image's unpacked root filesystem, as written by its layers (owners unshifted). */
  imageRootfs(imageId: string): Promise<string>;
  storeLayer(entries: AsyncIterable<LayerEntry> | Iterable<LayerEntry>): Promise<StoredLayer>;
  createImage(config: ImageConfigBlob, tags?: string[], parent?: string): Promise<string>;
  /** A stored image's config (by ID), without unpacking its root; rejects when the image is gone. */
  config(imageId: string): Promise<ImageConfigBlob>;
}

/**
 * What the classic builder needs from a runtime: its own container lifecycle for RUN steps (so
 * they get the runtime's containment, network and limits, and belong to the caller), its image
 * store, and the layer of a container's changes.
 */
export interface BuildBackend {
  runtime: ContainerRuntime;
  store: BuildStore;
  /** The layer of a stopped container's changes against its image; undefined when it changed nothing. */
  containerLayer(containerId: string): Promise<StoredLayer | undefined>;
  /** `user[:group]` (names or numbers) as ids, from the passwd and group files under `rootfs` (undefined for scratch: numbers only). */
  resolveUser(rootfs: string | undefined, spec: string): Promise<{ uid: number; gid: number }>;
  /** A private directory for build contexts (spooled there, removed after each build). */
  tempDir: string;
  cache: () => Promise<BuildCache>;
  /** Bytes a build context may hold, uncompressed. */
  maxContextBytes: number;
  /** `os/arch` of this server: the only platform FROM --platform and `platform` may name. */
  platform: string;
}
