import type { Readable } from 'node:stream';
import { EngineError } from '../../errors/engine-error.js';
import type { ImageStore } from '../image-store.js';

export async function loadArchive(_store: ImageStore, _archive: Readable): Promise<Readable> {
  throw EngineError.notImplemented('load: in progress');
}
