import { close, open, read } from 'node:fs';
import { Readable } from 'node:stream';
import { frameHeader } from '../../../engine-api/stdcopy.js';
import type { LogCursor, OutputLog } from './output-log.js';
import { READ_BLOCK, RECORD_OVERHEAD, frameOf, payloadOf, recordAt } from './log-record.js';
import { tailStart } from './log-tail.js';
import type { Segment } from './log-files.js';

/**
 * The most lines a record may hold and still be sent as a frame per line. A record holds one
 * read of the container's pipe: output written a few lines at a time (a log line, a progress
 * line) comes a frame per line, as from dockerd; a burst (`yes | head -c 1G`, a test suite's
 * dump) comes in records of a thousand 64-byte lines, and a frame per line costs the Docker CLI
 * one write(2) per line: 31 MB/s, against 1.5 GB/s for the same bytes through a pipe.
 */
export const LINE_FRAMES_UP_TO = 16;

/** What a {@link LogReader} reads and how it formats it. */
export interface LogReaderOptions {
  /** Offset to start at (clamped to the oldest byte kept). */
  from: number;
  /** Start instead at the last this many lines (computed when the reader first reads). */
  tail?: number;
  /** Stop at this offset (a non-follow read stops at the end as it was when asked). */
  stopAt?: number;
  /** Following: finish once this many runs have ended and everything is read. */
  untilRunsEnded?: number;
  multiplexed: boolean;
  stdout: boolean;
  stderr: boolean;
  timestamps: boolean;
  /**
   * Frames cut at line ends (`docker logs`): a record of at most {@link LINE_FRAMES_UP_TO} lines
   * gives one frame per line, as dockerd's log drivers do (docker-py's `logs(stream=True)`
   * yields a frame at a time); a record of more goes as one frame of its whole lines, so that
   * line-shaped output at line rate is not one client write per line (see LINE_FRAMES_UP_TO).
   * An attach stream leaves it off: dockerd's copies the container's writes as they come.
   */
  lineFrames?: boolean;
  since?: number;
  /** Records after this time end the stream (they come in time order). */
  until?: number;
}

/**
 * A byte stream over an {@link OutputLog}: stdcopy frames (or raw bytes for a TTY container),
 * optionally with RFC 3339 timestamps. What is written it reads from the log's files, a block
 * at a time; what is not yet written, from memory; one position (a log offset) says where it
 * is, so it goes from the one to the other with no gap and no duplicate. It reads only when
 * the consumer asks (`_read`) and holds its place with a cursor, so the log keeps unread bytes
 * and pauses the producer instead.
 */
export class LogReader extends Readable {
  private readonly cursor: LogCursor;
  private waiting = false;
  /** A file read (or the tail search) is in flight. */
  private busy = false;
  private ended = false;
  private pastUntil = false;
  private tail: number | undefined;
  /** Payload bytes of the record at `skipAt` not to send (the tail began inside it). */
  private skip = 0;
  private skipAt = -1;
  private file: { segment: Segment; fd: number } | undefined;
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
    this.tail = options.tail;
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
    if (this.ended) return;
    this.ended = true;
    this.log.off('append', this.wake);
    this.log.off('run-end', this.wake);
    this.log.unregister(this.cursor);
    if (!this.busy) this.closeFile();
  }

  private closeFile(): void {
    if (this.file) close(this.file.fd, () => undefined);
    this.file = undefined;
  }

  private finished(): boolean {
    if (this.pastUntil) return true;
    const { stopAt, untilRunsEnded } = this.options;
    if (stopAt !== undefined) return this.cursor.position >= stopAt;
    if (this.cursor.position < this.log.end) return false;
    return this.log.closed || untilRunsEnded === undefined || this.log.runsEnded >= untilRunsEnded;
  }

  private moveTo(position: number): void {
    this.cursor.position = position;
    this.log.advanced();
  }

  private pump(): void {
    while (!this.busy && !this.ended) {
      if (this.tail !== undefined) {
        this.findTail(this.tail);
        return;
      }
      if (this.finished()) {
        this.release();
        this.push(null);
        return;
      }
      const position = this.cursor.position;
      const files = this.log.files;
      const held = this.file?.segment;
      if (held && position >= held.base && position < held.base + held.size) {
        // The file it has open, read on after rotation deleted it.
        this.readFile(position, held);
        return;
      }
      if (position < this.log.start) {
        // Deleted by rotation before this reader opened it (rotation waits for no reader): said, then skipped.
        this.moveTo(this.log.start);
        if (files && this.log.onDisk && !this.lost(this.log.start - position)) return;
        continue;
      }
      if (files && position < files.end && position < this.log.memStart) {
        this.readFile(position);
        return;
      }
      const chunk = this.log.chunkAt(position);
      if (chunk === undefined) {
        this.waiting = true;
        return;
      }
      this.moveTo(chunk.offset + chunk.data.length + RECORD_OVERHEAD);
      if (chunk.offset < position) continue; // (a position inside a record only comes from a tail, which sets skipAt)
      const fits = this.deliver(chunk.stream, chunk.time, chunk.offset, chunk.data, undefined, chunk.head);
      if (!fits) return;
    }
  }

  private findTail(lines: number): void {
    this.busy = true;
    this.tail = undefined;
    tailStart(this.log, lines).then(
      (start) => {
        this.busy = false;
        if (this.ended) return this.closeFile();
        this.skip = start.skip;
        this.skipAt = start.offset;
        this.moveTo(Math.max(start.offset, this.cursor.position));
        this.pump();
      },
      (error: Error) => {
        this.busy = false;
        this.destroy(error);
      },
    );
  }

  /**
   * What a reader that fell behind rotation missed, as dockerd's follower misses it but said: one
   * line on stderr (multiplexed streams that include stderr; else nothing is added to the stream).
   * False when the consumer wants no more for now.
   */
  private lost(bytes: number): boolean {
    const { multiplexed, stderr, timestamps } = this.options;
    if (!multiplexed || !stderr) return true;
    const when = timestamps ? `${formatRfc3339Nano(Date.now())} ` : '';
    const text = Buffer.from(`${this.atLineStart[2] ? '' : '\n'}${when}${lostLine(bytes)}\n`);
    this.atLineStart[2] = true;
    const headerFits = this.push(frameHeader(2, text.length));
    return this.push(text) && headerFits;
  }

  /** Reads a block of whole records from the file holding `position` (or `held`, the file it has open) and sends them. */
  private readFile(position: number, held?: Segment): void {
    const segment = held ?? this.log.files!.segmentAt(position);
    if (!segment) {
      // Not reachable while files are contiguous; go on with what is in memory rather than loop.
      this.moveTo(this.log.files!.end);
      return this.pump();
    }
    const stopAt = this.options.stopAt ?? Infinity;
    const want = Math.min(READ_BLOCK, segment.base + segment.size - position, stopAt - position);
    this.busy = true;
    const withFd = (fd: number): void => {
      const block = Buffer.allocUnsafe(want);
      read(fd, block, 0, want, position - segment.base, (error, got) => {
        this.busy = false;
        if (this.ended) return this.closeFile();
        if (error) return this.destroy(error);
        this.sendBlock(block.subarray(0, got), position, segment);
      });
    };
    if (this.file?.segment === segment) return withFd(this.file.fd);
    this.closeFile();
    open(segment.path, 'r', (error, fd) => {
      if (this.ended) {
        this.busy = false;
        if (!error) close(fd, () => undefined);
        return;
      }
      if (error) {
        // Deleted by rotation since it was looked up: what it held is reported as lost (pump).
        this.busy = false;
        if (position >= this.log.start) this.moveTo(segment.base + segment.size);
        return this.pump();
      }
      this.file = { segment, fd };
      withFd(fd);
    });
  }

  private sendBlock(block: Buffer, position: number, segment: Segment): void {
    let at = 0;
    let fits = true;
    let r;
    while ((r = recordAt(block, at)) !== undefined) {
      at += RECORD_OVERHEAD + r.length;
      if (!this.deliver(r.stream, r.time, position + r.at, payloadOf(block, r), frameOf(block, r))) fits = false;
      if (this.pastUntil) break;
    }
    // A block with no whole record is not a log file's: skip the rest of that file rather than loop.
    this.moveTo(at === 0 ? segment.base + segment.size : position + at);
    if (fits) this.pump();
  }

  /**
   * Sends one record if it is wanted; false when the consumer wants no more for now. `frame` is
   * the record's header and payload as one slice (on-disk records), sent as is when unchanged.
   */
  private deliver(stream: 1 | 2, time: number, offset: number, payload: Buffer, frame: Buffer | undefined, head?: Buffer): boolean {
    const { stdout, stderr, since, until, multiplexed, timestamps } = this.options;
    if (until !== undefined && time > until) {
      this.pastUntil = true;
      return true;
    }
    if (stream === 1 ? !stdout : !stderr) return true;
    if (since !== undefined && time < since) return true;
    let data = payload;
    if (offset === this.skipAt && this.skip > 0) {
      data = data.subarray(this.skip);
      frame = undefined;
      if (data.length === 0) return true;
    }
    if (timestamps) {
      data = this.stamp(stream, time, data);
      frame = undefined;
    }
    if (!multiplexed) return this.push(data);
    if (this.options.lineFrames && fewLines(data)) return this.pushLines(stream, data);
    if (frame) return this.push(frame);
    // Both halves of a frame are pushed whatever the first push says: the cursor already moved.
    const headerFits = this.push(head && data === payload ? head.subarray(8) : frameHeader(stream, data.length));
    return this.push(data) && headerFits;
  }

  /**
   * A frame per line of `data` (the last may end without one), built into one buffer and pushed
   * once: a push per line would cost more than the copy for output of short lines.
   */
  private pushLines(stream: 1 | 2, data: Buffer): boolean {
    let lines = 0;
    for (let at = data.indexOf(0x0a); at !== -1; at = data.indexOf(0x0a, at + 1)) lines += 1;
    if (data[data.length - 1] !== 0x0a) lines += 1;
    const out = Buffer.allocUnsafe(data.length + 8 * lines);
    let to = 0;
    for (let start = 0; start < data.length;) {
      const newline = data.indexOf(0x0a, start);
      const end = newline === -1 ? data.length : newline + 1;
      out[to] = stream;
      out.fill(0, to + 1, to + 4);
      out.writeUInt32BE(end - start, to + 4);
      data.copy(out, to + 8, start, end);
      to += 8 + end - start;
      start = end;
    }
    return this.push(out);
  }

  /** Prefixes each line start with its record's time, as `docker logs -t` shows. */
  private stamp(stream: 1 | 2, time: number, data: Buffer): Buffer {
    const prefix = Buffer.from(`${formatRfc3339Nano(time)} `);
    const parts: Buffer[] = [];
    let start = 0;
    while (start < data.length) {
      if (this.atLineStart[stream]) parts.push(prefix);
      const nl = data.indexOf(0x0a, start);
      const end = nl === -1 ? data.length : nl + 1;
      parts.push(data.subarray(start, end));
      this.atLineStart[stream] = nl !== -1;
      start = end;
    }
    return Buffer.concat(parts);
  }
}

/**
 * The line a reader that fell behind rotation gets in place of what it missed.
 *
 * @example
 * lostLine(3145728); // 'dockgate: 3145728 bytes of this log's files were deleted by rotation (max-size/max-file) before this reader read them'
 */
export function lostLine(bytes: number): string {
  return `dockgate: ${bytes} bytes of this log's files were deleted by rotation (max-size/max-file) before this reader read them`;
}

/** Whether `data` holds more than one line but at most {@link LINE_FRAMES_UP_TO} (a final line without a newline counts). */
function fewLines(data: Buffer): boolean {
  let lines = 0;
  for (let at = data.indexOf(0x0a); at !== -1 && at < data.length - 1; at = data.indexOf(0x0a, at + 1)) {
    if (++lines >= LINE_FRAMES_UP_TO) return false;
  }
  return lines > 0;
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
