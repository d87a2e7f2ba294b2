import type { Readable } from 'node:stream';
import { EngineError } from '../../errors/engine-error.js';
import type { ImageStore } from '../image-store.js';
import type { ImagePullRequest } from '../image-store-types.js';

export async function pullImage(_store: ImageStore, _request: ImagePullRequest): Promise<Readable> {
  throw EngineError.notImplemented('pull: in progress');
}
