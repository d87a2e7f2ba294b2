/** `dockgate/engine/images`: the OCI image store the sandbox runtime runs from (tar-stream for layers and archives). */
export { ImageStore } from './image-store.js';
export type { CommitRequest } from './image-store.js';
export type * from './image-store-types.js';
