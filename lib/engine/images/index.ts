export { ImageStore } from './image-store.js';
export type { CommitRequest } from './image-store.js';
export type * from './image-store-types.js';
