import type { Readable } from 'node:stream';
import { EngineError } from '../../errors/engine-error.js';
import type { ImageStore } from '../image-store.js';

export async function saveArchive(_store: ImageStore, _refs: string[]): Promise<Readable> {
  throw EngineError.notImplemented('save: in progress');
}
