import type { Readable, Writable } from 'node:stream';
import { drainOrClose } from './drain-or-close.js';
import { StdcopyFramingError } from './stdcopy-error.js';

/**
 * Docker's stdcopy framing (moby pkg/stdcopy): without a TTY each chunk of output travels as
 * `[stream, 0, 0, 0, size (uint32 big-endian)]` followed by `size` bytes.
 */
export const STREAM_STDIN = 0;
export const STREAM_STDOUT = 1;
export const STREAM_STDERR = 2;
/** dockerd's in-band error stream ("Error grabbing logs: …"). */
export const STREAM_SYSTEMERR = 3;
export type StreamType = 0 | 1 | 2 | 3;

const HEADER = 8;

/**
 * The 8-byte header of one frame.
 *
 * @example
 * frameHeader(1, 6); // <Buffer 01 00 00 00 00 00 00 06>
 */
export function frameHeader(stream: StreamType, size: number): Buffer {
  const header = Buffer.alloc(HEADER);
  header[0] = stream;
  header.writeUInt32BE(size, 4);
  return header;
}

/**
 * One whole frame (header + payload) in a single buffer.
 *
 * @example
 * encodeFrame(1, Buffer.from('hello\n'));
 */
export function encodeFrame(stream: StreamType, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER + payload.length);
  out[0] = stream;
  out[1] = 0;
  out[2] = 0;
  out[3] = 0;
  out.writeUInt32BE(payload.length, 4);
  payload.copy(out, HEADER);
  return out;
}

/** A decoded frame. */
export interface Frame {
  stream: StreamType;
  payload: Buffer;
}

/**
 * Incremental decoder: feed it bytes as they arrive (frames may be split anywhere) and it
 * returns the frames completed so far. A header with an unknown stream type is an error, as
 * in stdcopy.StdCopy.
 *
 * @example
 * const decoder = new FrameDecoder();
 * for (const frame of decoder.push(chunk)) process.stdout.write(frame.payload);
 */
export class FrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Frame[] = [];
    let offset = 0;
    while (this.pending.length - offset >= HEADER) {
      const stream = this.pending[offset]!;
      if (stream > STREAM_SYSTEMERR) throw new StdcopyFramingError(`Unrecognized input header: ${stream}`);
      const size = this.pending.readUInt32BE(offset + 4);
      if (this.pending.length - offset - HEADER < size) break;
      frames.push({ stream: stream as StreamType, payload: this.pending.subarray(offset + HEADER, offset + HEADER + size) });
      offset += HEADER + size;
    }
    this.pending = this.pending.subarray(offset);
    return frames;
  }

  /** Bytes of an incomplete frame still held (non-zero at end of stream means truncation). */
  get buffered(): number {
    return this.pending.length;
  }
}

/**
 * Splits a multiplexed stream into stdout and stderr writables, honouring their back-pressure.
 * Resolves when the source ends; rejects on a framing error or a truncated last frame.
 * systemerr frames (type 3) go to stderr.
 *
 * @example
 * await demultiplex(res, process.stdout, process.stderr);
 */
export async function demultiplex(source: Readable, stdout: Writable, stderr: Writable): Promise<void> {
  const decoder = new FrameDecoder();
  for await (const chunk of source) {
    for (const frame of decoder.push(chunk as Buffer)) {
      const target = frame.stream === STREAM_STDOUT ? stdout : stderr;
      if (!target.write(frame.payload)) {
        await drainOrClose(target);
        // A destination that closed never drains: stop reading rather than wait forever.
        if (target.destroyed) return;
      }
    }
  }
  if (decoder.buffered > 0) throw new StdcopyFramingError('multiplexed stream ended inside a frame');
}
