import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { EngineError } from '../../../engine-api/engine-error.js';

const GZIP = [0x1f, 0x8b];
const ZSTD = [0x28, 0xb5, 0x2f, 0xfd];

const startsWith = (head: Buffer, magic: number[]) => magic.every((byte, i) => head[i] === byte);

/** Reads at least `n` bytes (or all there is) and puts them back, to sniff a format. */
async function peek(stream: Readable, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  for (;;) {
    const chunk = stream.read() as Buffer | null;
    if (chunk !== null) {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= n) break;
      continue;
    }
    if (stream.readableEnded) break;
    // A stream that failed or closed before this looked (a download aborted meanwhile) emits nothing more.
    if (stream.errored) throw stream.errored;
    if (stream.destroyed) throw new Error('the layer stream was closed before its first bytes');
    const ended = await new Promise<boolean>((resolve, reject) => {
      const cleanup = () => {
        stream.off('readable', onReadable);
        stream.off('end', onEnd);
        stream.off('error', onError);
        stream.off('close', onClose);
      };
      const onReadable = () => { cleanup(); resolve(false); };
      const onEnd = () => { cleanup(); resolve(true); };
      const onError = (err: Error) => { cleanup(); reject(err); };
      const onClose = () => { cleanup(); reject(stream.errored ?? new Error('the layer stream was closed before its first bytes')); };
      stream.on('readable', onReadable);
      stream.on('end', onEnd);
      stream.on('error', onError);
      stream.on('close', onClose);
    });
    if (ended) break;
  }
  const head = Buffer.concat(chunks);
  if (head.length > 0) stream.unshift(head);
  return head;
}

/**
 * A layer as an uncompressed tar stream, whatever it was sent as: gzip is recognized by its
 * magic bytes (as dockerd's archive.DecompressStream does, whatever the media type says), plain
 * tar passes through, and zstd is refused by name: Node 20's zlib has no zstd decoder.
 */
export async function decompressedLayer(stream: Readable): Promise<Readable> {
  const head = await peek(stream, 4);
  if (startsWith(head, ZSTD)) {
    stream.destroy();
    throw EngineError.notImplemented('zstd-compressed layers are not supported: this Node.js has no zstd decoder (gzip and uncompressed layers are)');
  }
  if (!startsWith(head, GZIP)) return stream;
  // Larger output chunks than zlib's 16 KiB: fewer round trips to the threadpool for a large layer.
  const gunzip = createGunzip({ chunkSize: 128 * 1024 });
  stream.on('error', (err) => gunzip.destroy(err));
  return stream.pipe(gunzip);
}
