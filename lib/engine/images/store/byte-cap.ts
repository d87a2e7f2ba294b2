import { Transform, type TransformCallback } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';

/**
 * Passes bytes through until more than `max` have gone by, then fails with a 400 naming the cap
 * (`what` says what was too large, `option` which option sets the cap). Used on the uncompressed
 * bytes, so a small gzip bomb is stopped as early as a large archive.
 */
export function byteCap(max: number, what: string, option: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      seen += chunk.length;
      if (seen > max) {
        done(EngineError.invalidParameter(`${what} is larger than this server's limit of ${max} bytes (option "${option}")`));
        return;
      }
      done(null, chunk);
    },
  });
}
