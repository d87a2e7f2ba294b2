import {
  closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readdirSync, readSync, unlinkSync, writev,
} from 'node:fs';
import { join } from 'node:path';
import { READ_BLOCK, RECORD_OVERHEAD, RECORD_TRAILER, recordAt } from './log-record.js';
import type { LogRotation } from './log-config.js';

/** One file of a container's log: which bytes of the whole log it holds. */
export interface Segment {
  seq: number;
  path: string;
  /** Log offset of its first byte. */
  base: number;
  /** Bytes written to it (whole records only). */
  size: number;
}

const NAME = /^(\d{6,})\.log$/;
const fileName = (seq: number): string => `${String(seq).padStart(6, '0')}.log`;

/**
 * A container's log files, `<dir>/000001.log`, `000002.log`…: records are appended to the newest;
 * at `maxSize` a new file is started and beyond `maxFile` the oldest is deleted. Files are never
 * renamed, so a reader that looked a file up by name never opens another one's bytes. Offsets
 * count from the oldest file kept when the log was opened.
 */
export class LogFiles {
  readonly segments: Segment[] = [];
  /** Open on the newest file while output comes; closed when idle, so an exited container holds no descriptor. */
  private fd: number | undefined;
  /** Set after a write failed (disk full…): nothing more is written. */
  failed: Error | undefined;

  private constructor(
    readonly dir: string,
    readonly rotation: LogRotation,
  ) {
    // Made at the first write, so that a create refused after this leaves nothing on disk.
    const seqs = (existsSync(dir) ? readdirSync(dir) : []).map((n) => NAME.exec(n)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
    let base = 0;
    for (const seq of seqs) {
      const path = join(dir, fileName(seq));
      const size = seq === seqs[seqs.length - 1] ? wholeRecords(path) : sizeOf(path);
      this.segments.push({ seq, path, base, size });
      base += size;
    }
    if (this.segments.length === 0) this.segments.push({ seq: 1, path: join(dir, fileName(1)), base: 0, size: 0 });
  }

  /** Opens (making it when missing) the log in `dir`; a record cut short by a crash is cut off. */
  static open(dir: string, rotation: LogRotation): LogFiles {
    return new LogFiles(dir, rotation);
  }

  get current(): Segment {
    return this.segments[this.segments.length - 1]!;
  }

  /** Offset of the oldest byte on disk. */
  get start(): number {
    return this.segments[0]!.base;
  }

  /** Offset after the last byte written. */
  get end(): number {
    return this.current.base + this.current.size;
  }

  /** The file holding `offset`, or undefined when it was deleted (or not written yet). */
  segmentAt(offset: number): Segment | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]!;
      if (offset >= s.base) return offset < s.base + s.size ? s : undefined;
    }
    return undefined;
  }

  /** Appends whole records (their buffers in order) to the newest file; `done` once they are in the kernel. */
  append(buffers: Buffer[], bytes: number, done: () => void): void {
    const segment = this.current;
    let fd: number;
    try {
      if (this.fd === undefined) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      fd = this.fd ??= openSync(segment.path, 'a', 0o600);
    } catch (error) {
      this.failed = error as Error;
      return queueMicrotask(done);
    }
    writev(fd, buffers, (error, written) => {
      if (error || written !== bytes) {
        this.failed = error ?? new Error(`short write to ${segment.path}`);
        // Cut a partly written record off, so the file stays whole records.
        try {
          ftruncateSync(fd, segment.size);
        } catch {
          // The file is gone or the disk refuses: readers stop at the last whole record anyway.
        }
      } else {
        segment.size += bytes;
      }
      done();
    });
  }

  /** Starts the next file (never while a write is in flight); the caller drops the oldest when it may. */
  rotate(): void {
    const next: Segment = { seq: this.current.seq + 1, path: join(this.dir, fileName(this.current.seq + 1)), base: this.end, size: 0 };
    const fd = openSync(next.path, 'a', 0o600);
    this.close();
    this.fd = fd;
    this.segments.push(next);
  }

  /** Deletes the oldest file (readers that have it open keep reading it). */
  dropOldest(): void {
    const oldest = this.segments.shift();
    if (oldest) unlinkIfThere(oldest.path);
  }

  /** Closes the newest file until the next append (never while a write is in flight). */
  close(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = undefined;
  }
}

function sizeOf(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

function unlinkIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone (the container's directory was removed)
  }
}

/**
 * The size of `path` up to its last whole record, the file cut there. The last record is checked
 * by its trailer (one read); only when it is broken (a write cut short by a crash) is the file
 * walked from the start to find the last good record.
 */
function wholeRecords(path: string): number {
  const fd = openSync(path, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    const trailer = Buffer.alloc(RECORD_TRAILER);
    if (size >= RECORD_OVERHEAD && readSync(fd, trailer, 0, RECORD_TRAILER, size - RECORD_TRAILER) === RECORD_TRAILER) {
      const total = trailer.readUInt32BE(0) + RECORD_OVERHEAD;
      if (total <= size) {
        const last = Buffer.alloc(total);
        if (readSync(fd, last, 0, total, size - total) === total && recordAt(last, 0)) return size;
      }
    }
    let good = 0;
    const block = Buffer.alloc(READ_BLOCK);
    for (;;) {
      const got = readSync(fd, block, 0, READ_BLOCK, good);
      let at = 0;
      let r;
      while ((r = recordAt(block.subarray(0, got), at)) !== undefined) at += RECORD_OVERHEAD + r.length;
      good += at;
      if (at === 0 || got < READ_BLOCK) break;
    }
    ftruncateSync(fd, good);
    return good;
  } finally {
    closeSync(fd);
  }
}
