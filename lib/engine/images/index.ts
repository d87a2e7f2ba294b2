/** `dockgate/engine/images`: the OCI image store the sandbox runtime runs from (tar-stream for layers and archives). */
export { ImageStore, type CommitRequest } from './image-store.js';
export type {
  ImageStoreApi, ImageStoreOptions, ImageUsage, ImagePullRequest, ImageRemoveOptions, ImageDeleteEntry, ImagePruneResult,
  ImageRecord, ImageConfigBlob, ImageRunConfig, ImageHistoryEntry, ResolvedImage, StoredLayer,
} from './image-store-types.js';
