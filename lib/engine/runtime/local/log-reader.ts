import { Readable } from 'node:stream';
import { frameHeader } from '../../../engine-api/stdcopy.js';
import type { LogChunk, LogCursor, OutputLog } from './output-log.js';

/** What a {@link LogReader} reads and how it formats it. */
export interface LogReaderOptions {
  from: number;
  /** Stop at this offset (a non-follow read stops at the end as it was when asked). */
  stopAt?: number;
  /** Following: finish once this many runs have ended and everything is read. */
  untilRunsEnded?: number;
  multiplexed: boolean;
  stdout: boolean;
  stderr: boolean;
  timestamps: boolean;
  since?: number;
  until?: number;
}

/**
 * A byte stream over an {@link OutputLog}: stdcopy frames (or raw bytes for a TTY container),
 * optionally with RFC 3339 timestamps. It reads only when the consumer asks (`_read`), and
 * holds its place with a cursor, so the log keeps unread bytes and pauses the producer instead.
 */
export class LogReader extends Readable {
  private readonly cursor: LogCursor;
  private waiting = false;
  private readonly atLineStart = { 1: true, 2: true };
  private readonly wake = (): void => {
    if (!this.waiting) return;
    this.waiting = false;
    this.pump();
  };

  constructor(
    private readonly log: OutputLog,
    private readonly options: LogReaderOptions,
  ) {
    super({ highWaterMark: 64 * 1024 });
    this.cursor = log.register(options.from);
    log.on('append', this.wake);
    log.on('run-end', this.wake);
  }

  override _read(): void {
    this.waiting = false;
    this.pump();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.release();
    callback(error);
  }

  private release(): void {
    this.log.off('append', this.wake);
    this.log.off('run-end', this.wake);
    this.log.unregister(this.cursor);
  }

  private finished(): boolean {
    const { stopAt, untilRunsEnded } = this.options;
    if (stopAt !== undefined) return this.cursor.position >= stopAt;
    if (this.cursor.position < this.log.end) return false;
    return this.log.closed || untilRunsEnded === undefined || this.log.runsEnded >= untilRunsEnded;
  }

  private pump(): void {
    for (;;) {
      if (this.finished()) {
        this.release();
        this.push(null);
        return;
      }
      const chunk = this.log.chunkAt(this.cursor.position);
      if (chunk === undefined) {
        this.waiting = true;
        return;
      }
      const from = Math.max(0, this.cursor.position - chunk.offset);
      const limit = this.options.stopAt === undefined ? chunk.data.length : Math.min(chunk.data.length, this.options.stopAt - chunk.offset);
      const data = chunk.data.subarray(from, limit);
      this.cursor.position = chunk.offset + limit;
      this.log.advanced();
      if (!this.wanted(chunk)) continue;
      const payload = this.options.timestamps ? this.stamp(chunk, data) : data;
      // Both halves of a frame are pushed whatever the first push says: the cursor already moved.
      const headerFits = this.options.multiplexed ? this.push(frameHeader(chunk.stream, payload.length)) : true;
      const payloadFits = this.push(payload);
      if (!headerFits || !payloadFits) return;
    }
  }

  private wanted(chunk: LogChunk): boolean {
    const { stdout, stderr, since, until } = this.options;
    if (chunk.stream === 1 ? !stdout : !stderr) return false;
    if (since !== undefined && chunk.time < since) return false;
    if (until !== undefined && chunk.time > until) return false;
    return true;
  }

  /** Prefixes each line start with its chunk's time, as `docker logs -t` shows. */
  private stamp(chunk: LogChunk, data: Buffer): Buffer {
    const prefix = Buffer.from(`${formatRfc3339Nano(chunk.time)} `);
    const parts: Buffer[] = [];
    let start = 0;
    while (start < data.length) {
      if (this.atLineStart[chunk.stream]) parts.push(prefix);
      const nl = data.indexOf(0x0a, start);
      const end = nl === -1 ? data.length : nl + 1;
      parts.push(data.subarray(start, end));
      this.atLineStart[chunk.stream] = nl !== -1;
      start = end;
    }
    return Buffer.concat(parts);
  }
}

/**
 * Go's RFC3339Nano (trailing zeros of the fraction dropped), from milliseconds.
 *
 * @example
 * formatRfc3339Nano(1700000000123.5); // '2023-11-14T22:13:20.1235Z'
 */
export function formatRfc3339Nano(ms: number): string {
  const whole = Math.floor(ms / 1000);
  const nanos = Math.min(999_999_999, Math.round((ms - whole * 1000) * 1e6));
  const base = new Date(whole * 1000).toISOString().slice(0, 19);
  const fraction = String(nanos).padStart(9, '0').replace(/0+$/, '');
  return fraction === '' ? `${base}Z` : `${base}.${fraction}Z`;
}
