import type { ImageConfigBlob, ImageRecord, StoredLayer } from './image-store-types.js';
import type { ResolvedStoreOptions } from './store-options.js';
import type { LayerFiles } from './store/layer-files.js';

/** What `ImageStore.commit` needs: a verified config and its layers, already stored. */
export interface CommitRequest {
  config: Buffer;
  layers: StoredLayer[];
  /** Familiar `name:tag` references to point at the image. */
  tags: string[];
  /** `name@sha256:…` of the manifest it was pulled by. */
  repoDigest?: string;
  onLayer?: (index: number, read: () => number) => void;
  /** The image it was built on (recorded as its `parent`). */
  parent?: string;
  /** A temporary root with every layer unpacked already (a pull's, stream-unpack.ts): put in place instead of unpacking. */
  unpacked?: string;
  /** Leave the root filesystem to be unpacked when the image is first run (a build's steps). */
  lazyRootfs?: boolean;
}

/**
 * The part of the image store its helpers work with (pull, load, save, the busybox seed):
 * `ImageStore` implements it, and the helpers take it rather than the class, so the class and
 * its helpers do not import each other.
 */
export interface ImageStoreCore {
  readonly dir: string;
  readonly options: ResolvedStoreOptions;
  readonly files: LayerFiles;
  record(ref: string): ImageRecord | undefined;
  recordOrThrow(ref: string): ImageRecord;
  records(): ImageRecord[];
  /** Path of a blob (an image config) by digest. */
  blobFile(digest: string): string;
  config(id: string): Promise<ImageConfigBlob>;
  commit(request: CommitRequest): Promise<{ id: string; moved: { ref: string; from: string }[] }>;
  /** Records `name@sha256:…` among the image's RepoDigests (after a push, as dockerd does). */
  addRepoDigest(id: string, repoDigest: string): Promise<void>;
}
