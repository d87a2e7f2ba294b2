import { EventEmitter } from 'node:events';
import type { LogFiles } from './log-files.js';
import { MAX_PAYLOAD, RECORD_OVERHEAD, recordHead, recordTrailer } from './log-record.js';

/**
 * While a container runs, its output is handed to the files in writes of at least this many
 * bytes, or once the oldest byte waiting is {@link WRITE_DELAY_MS} old. Output comes in pieces
 * of a few KiB (a pipe read gets what the container wrote since the last one): a write per piece
 * cost a file-system request each: with the Docker CLI following 1 GiB (bench:engine), the
 * server used 6-8 s of CPU against 5 s batched, and gave 116-161 MB/s against 178-185.
 */
export const WRITE_BATCH = 256 * 1024;
/** The longest output waits in memory before it is written: what a crash of the server can lose. */
export const WRITE_DELAY_MS = 25;

/** One record of output still in memory (see log-record.ts for its form on disk). */
export interface LogChunk {
  stream: 1 | 2;
  /** Milliseconds since the epoch, sub-millisecond precision. */
  time: number;
  data: Buffer;
  /** Log offset of the record (offsets count records' bytes as they lie on disk). */
  offset: number;
  /** The record's 16 bytes before the payload; bytes 8-16 are its stdcopy frame header. */
  head: Buffer;
}

/** A reader's position; the log keeps every byte at or after the slowest registered cursor. */
export interface LogCursor {
  position: number;
}

/** Where a log keeps its output. */
export interface OutputLogOptions {
  /**
   * Bytes of output held in memory. With files: the backlog not yet written (the producer is
   * paused beyond it). Without: the history kept, older records dropped as a rotated file would be.
   */
  capacity: number;
  /** The container's log files: output goes there as it comes and readers read it back. */
  files?: LogFiles;
  /** False for the `none` driver: output reaches readers that are there (attach) and is then dropped. Defaults to true. */
  keep?: boolean;
}

/**
 * A container's output. With files, output is appended to disk as it comes: one write at a time
 * (one `writev`), each with everything waiting once {@link WRITE_BATCH} bytes or
 * {@link WRITE_DELAY_MS} ms of it wait, and at once when the container has exited or someone
 * waits for it (`settled`). So a crash of the server loses at most the last
 * {@link WRITE_DELAY_MS} ms of output (or what a disk slower than the output holds back), and
 * memory holds only that backlog. Readers read what is written from the files and the rest from
 * memory, by offset, so there is no gap and no duplicate where the one ends and the other begins.
 *
 * Rotation never waits for a reader: the container's output is never held back by a slow client
 * (`docker logs -f` piped to a pager, a reader that stopped reading its socket). A reader keeps
 * reading the file it has open after rotation deleted it, and one that falls behind the oldest
 * file kept is told what it lost (log-reader.ts). Without files, the log keeps a registered
 * reader's unread bytes in memory and reports `full` beyond `capacity`: the producer pauses the
 * child until the reader catches up. With files, `full` means only a write backlog (a disk slower
 * than the output).
 *
 * Events: `append` (new data), `run-end` (a run finished), `drain` (no longer full).
 */
export class OutputLog extends EventEmitter {
  /** Records in memory, oldest first, from index `first`. */
  private records: LogChunk[] = [];
  private first = 0;
  private memBytes = 0;
  private cursors = new Set<LogCursor>();
  private wasFull = false;
  private writing = false;
  private flushTimer: NodeJS.Timeout | undefined;
  private settledWaiters: (() => void)[] = [];
  readonly capacity: number;
  readonly files: LogFiles | undefined;
  private readonly keep: boolean;
  /** Largest payload of one record: small next to max-size, so a file ends close to it. */
  private readonly piece: number;
  /** Offset the next record will have. */
  end: number;
  runsStarted = 0;
  runsEnded = 0;
  closed = false;

  constructor(options: OutputLogOptions | number) {
    super();
    this.setMaxListeners(0);
    const o = typeof options === 'number' ? { capacity: options } : options;
    this.capacity = o.capacity;
    this.files = o.files;
    this.keep = o.keep !== false;
    this.end = this.files?.end ?? 0;
    const maxSize = this.files?.rotation.maxSize;
    this.piece = maxSize === undefined ? MAX_PAYLOAD : Math.min(MAX_PAYLOAD, Math.max(128, Math.floor(maxSize / 8)));
  }

  /** True while output goes to the files (false without them, or after a write failed). */
  get onDisk(): boolean {
    return this.files !== undefined && this.files.failed === undefined;
  }

  /** Offset of the oldest byte still readable. */
  get start(): number {
    if (this.onDisk) return this.files!.start;
    return this.memStart;
  }

  /** Offset of the oldest record in memory (everything before it is on disk, or gone). */
  get memStart(): number {
    return this.records[this.first]?.offset ?? this.end;
  }

  /** True when the producer should pause: what memory holds (the unwritten backlog, or without files the unread history) is over capacity. */
  get full(): boolean {
    return this.memBytes > this.capacity;
  }

  /** The file a reader reads now (inspect's LogPath), when the log has files. */
  get path(): string | undefined {
    return this.files?.current.path;
  }

  append(stream: 1 | 2, data: Buffer, time: number = nowMs()): void {
    if (data.length === 0 || this.closed) return;
    for (let at = 0, end = 0; at < data.length; at = end) {
      end = Math.min(data.length, at + this.piece);
      // Cut after a newline when there is one, so that a rotated file begins with a whole line (as dockerd's do).
      const nl = end < data.length ? data.lastIndexOf(0x0a, end - 1) : -1;
      if (nl >= at) end = nl + 1;
      const part = at === 0 && end === data.length ? data : data.subarray(at, end);
      this.records.push({ stream, time, data: part, offset: this.end, head: recordHead(stream, time, part.length) });
      this.end += part.length + RECORD_OVERHEAD;
      this.memBytes += part.length + RECORD_OVERHEAD;
    }
    this.write();
    this.trim();
    this.emit('append');
  }

  beginRun(): void {
    this.runsStarted++;
  }

  endRun(): void {
    this.runsEnded = this.runsStarted;
    this.emit('run-end');
    // An exited container holds no file descriptor (a thousand of them would).
    void this.settled().then(() => {
      if (!this.writing && this.runsEnded === this.runsStarted) this.files?.close();
    });
  }

  /** No more output will ever come (container removed): followers finish, the files are closed once written. */
  close(): void {
    this.closed = true;
    this.emit('run-end');
    this.write();
    if (!this.writing) this.files?.close();
  }

  /** Resolves once everything appended so far is written (at once without files). */
  settled(): Promise<void> {
    if (!this.writing && !this.waitingToWrite()) return Promise.resolve();
    return new Promise((resolve) => {
      this.settledWaiters.push(resolve);
      this.write();
      if (!this.writing) this.resolveSettled();
    });
  }

  register(position: number): LogCursor {
    const cursor = { position: Math.max(position, this.start) };
    this.cursors.add(cursor);
    return cursor;
  }

  unregister(cursor: LogCursor): void {
    if (this.cursors.delete(cursor)) this.advanced();
  }

  /** Call after moving a cursor forward: read records can go, a waiting rotation can happen. */
  advanced(): void {
    if (!this.writing) this.write();
    this.trim();
  }

  /** The record in memory holding `offset`, or the first one after it. */
  chunkAt(offset: number): LogChunk | undefined {
    const records = this.records;
    let lo = this.first;
    let hi = records.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = records[mid]!;
      if (offset < c.offset) hi = mid - 1;
      else if (offset >= c.offset + c.data.length + RECORD_OVERHEAD) lo = mid + 1;
      else return c;
    }
    return records[lo];
  }

  /** The records in memory, newest first (for tail). */
  *newestInMemory(): Generator<LogChunk> {
    for (let i = this.records.length - 1; i >= this.first; i--) yield this.records[i]!;
  }

  private rotateIfDue(): void {
    const files = this.files;
    // Whatever the readers: one still in the oldest file reads on from its open descriptor.
    if (!this.onDisk || files!.current.size < files!.rotation.maxSize) return;
    try {
      files!.rotate();
      while (files!.segments.length > files!.rotation.maxFile) files!.dropOldest();
    } catch (error) {
      files!.failed = error as Error;
    }
  }

  /** Whether appended output is not written yet. */
  private waitingToWrite(): boolean {
    return this.onDisk && this.files!.end < this.end;
  }

  /** Whether what waits is written now rather than batched: no run is going on, the log closed, someone waits, or the batch is full. */
  private writeNow(): boolean {
    return this.closed || this.runsEnded === this.runsStarted || this.settledWaiters.length > 0 || this.end - this.files!.end >= Math.min(WRITE_BATCH, this.capacity / 2);
  }

  private resolveSettled(): void {
    for (const resolve of this.settledWaiters.splice(0)) resolve();
  }

  /** Hands the backlog to the files: one write at a time, each with all that is waiting; `due` when the batch timer fired. */
  private write(due = false): void {
    if (this.writing || !this.onDisk) return;
    this.rotateIfDue();
    const files = this.files!;
    // Only when the rotation failed (the log is then off disk): never grow a file past max-size.
    if (files.current.size >= files.rotation.maxSize) return;
    let from = this.first;
    while (from < this.records.length && this.records[from]!.offset < files.end) from++;
    if (from === this.records.length) return;
    if (!due && !this.writeNow()) {
      this.flushTimer ??= setTimeout(() => {
        this.flushTimer = undefined;
        this.write(true);
      }, WRITE_DELAY_MS);
      return;
    }
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    const room = files.current.size < files.rotation.maxSize ? files.rotation.maxSize - files.current.size : Infinity;
    const buffers: Buffer[] = [];
    let bytes = 0;
    // Up to the rotation point (at least one record), and within the kernel's iovec limit.
    for (let i = from; i < this.records.length && buffers.length < 1020 && (bytes === 0 || bytes < room); i++) {
      const r = this.records[i]!;
      buffers.push(r.head, r.data, recordTrailer(r.data.length));
      bytes += r.data.length + RECORD_OVERHEAD;
    }
    this.writing = true;
    files.append(buffers, bytes, () => {
      this.writing = false;
      this.trim();
      this.write();
      if (this.writing) return;
      if (this.closed) files.close();
      this.resolveSettled();
    });
  }

  private trim(): void {
    const records = this.records;
    if (this.onDisk) {
      const written = this.files!.end;
      while (this.first < records.length && records[this.first]!.offset < written) this.dropFirst();
    } else {
      let slowest = Infinity;
      for (const c of this.cursors) slowest = Math.min(slowest, c.position);
      const keep = this.keep ? this.capacity : 0;
      while (this.first < records.length && this.memBytes > keep) {
        const r = records[this.first]!;
        if (r.offset + r.data.length + RECORD_OVERHEAD > slowest) break;
        this.dropFirst();
      }
    }
    if (this.first > 1024 && this.first * 2 > records.length) {
      this.records = records.slice(this.first);
      this.first = 0;
    }
    const full = this.full;
    const drained = this.wasFull && !full;
    // Set before emitting: a 'drain' listener appends synchronously and re-enters trim().
    this.wasFull = full;
    if (drained) this.emit('drain');
  }

  private dropFirst(): void {
    const r = this.records[this.first]!;
    this.records[this.first] = undefined as unknown as LogChunk;
    this.first++;
    this.memBytes -= r.data.length + RECORD_OVERHEAD;
  }
}

/** Wall-clock milliseconds with the monotonic clock's sub-millisecond part. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
