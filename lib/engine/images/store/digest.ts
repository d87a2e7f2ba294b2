import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';

const SHA256 = /^sha256:[0-9a-f]{64}$/;

/** True for a canonical `sha256:<64 hex>` digest (the only algorithm the store accepts). */
export const isSha256Digest = (value: unknown): value is string => typeof value === 'string' && SHA256.test(value);

/** `sha256:<hex>` of bytes. */
export function sha256Of(data: Buffer | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The hex part of a `sha256:` digest, refusing anything else (it becomes a file name). */
export function digestHex(digest: string): string {
  if (!isSha256Digest(digest)) throw EngineError.invalidParameter(`unsupported digest: ${String(digest).slice(0, 80)}`);
  return digest.slice('sha256:'.length);
}

/**
 * A pass-through stream that hashes and counts what goes through it, so a blob is verified while
 * it streams to disk instead of being buffered.
 */
export class HashingStream extends Transform {
  readonly #hash: Hash = createHash('sha256');
  bytes = 0;

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    this.#hash.update(chunk);
    this.bytes += chunk.length;
    callback(null, chunk);
  }

  /** `sha256:<hex>` of everything seen; call once, after the stream ended. */
  digest(): string {
    return `sha256:${this.#hash.digest('hex')}`;
  }
}

/**
 * Refuses content whose digest is not the one it was asked by (OCI distribution spec: a client
 * must verify content against its digest); the message names both, as containerd's does.
 */
export function verifyDigest(what: string, expected: string, actual: string): void {
  if (expected !== actual) throw EngineError.invalidParameter(`${what} digest mismatch: expected ${expected}, got ${actual}`);
}
