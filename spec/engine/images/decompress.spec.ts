import { describe, expect, test } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { decompressedLayer } from '../../../lib/engine/images/store/decompress.js';

// A pull's download can fail (or be aborted, when another layer failed: pull-image.ts) before
// the store starts reading it. Reading its first bytes must then fail with that error, never wait
// for bytes, an end or an error that already came.
describe('a layer stream that failed before it was read rejects the read with its error', () => {
  test('destroyed with an error before decompressedLayer looks at it', async () => {
    const stream = new PassThrough();
    stream.on('error', () => undefined);
    stream.destroy(new Error('the download was aborted'));
    await delay(10);
    const outcome = await Promise.race([decompressedLayer(stream).then(() => 'read', (err: Error) => err.message), delay(2000).then(() => 'still waiting')]);
    expect(outcome).toBe('the download was aborted');
  });
  test('destroyed without an error (closed early) before decompressedLayer looks at it', async () => {
    const stream = new PassThrough();
    stream.destroy();
    await delay(10);
    const outcome = await Promise.race([decompressedLayer(stream).then(() => 'read', (err: Error) => err.message), delay(2000).then(() => 'still waiting')]);
    expect(outcome).toMatch(/closed before/);
  });
});
