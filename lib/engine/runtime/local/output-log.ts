import { EventEmitter } from 'node:events';

/** One piece of output as it came from the container. */
export interface LogChunk {
  stream: 1 | 2;
  /** Milliseconds since the epoch, sub-millisecond precision. */
  time: number;
  data: Buffer;
  /** Byte offset of `data[0]` in the container's whole output. */
  offset: number;
}

/** A reader's position; the log keeps every byte at or after the slowest registered cursor. */
export interface LogCursor {
  position: number;
}

/**
 * A container's output, bounded: it keeps at most `capacity` bytes (older chunks are dropped,
 * as a capped log file would rotate). Bytes a registered reader has not read yet are never
 * dropped; instead the log reports `full` and the producer pauses the child's pipes until the
 * reader catches up, so a slow client slows the container down rather than growing memory.
 *
 * Events: `append` (new data), `run-end` (a run finished), `drain` (no longer full).
 */
export class OutputLog extends EventEmitter {
  private chunks: LogChunk[] = [];
  private retained = 0;
  private cursors = new Set<LogCursor>();
  private wasFull = false;
  /** Total bytes ever appended (the offset the next byte will have). */
  end = 0;
  runsStarted = 0;
  runsEnded = 0;
  closed = false;

  constructor(readonly capacity: number) {
    super();
    this.setMaxListeners(0);
  }

  /** Offset of the oldest byte still kept. */
  get start(): number {
    return this.chunks[0]?.offset ?? this.end;
  }

  /** True when unread bytes exceed the capacity: the producer should pause. */
  get full(): boolean {
    return this.retained > this.capacity;
  }

  append(stream: 1 | 2, data: Buffer, time: number = nowMs()): void {
    if (data.length === 0) return;
    this.chunks.push({ stream, time, data, offset: this.end });
    this.end += data.length;
    this.retained += data.length;
    this.trim();
    this.emit('append');
  }

  /** The chunks still kept, oldest first (what a restarted server can give back). */
  kept(): readonly LogChunk[] {
    return this.chunks;
  }

  /**
   * Refills an empty log with chunks kept by an earlier server, as one finished run: their
   * offsets are renumbered from 0, so readers see them as the container's whole output.
   */
  restore(chunks: readonly { stream: 1 | 2; time: number; data: Buffer }[]): void {
    if (this.end !== 0) throw new Error('restore into a log that has output');
    for (const c of chunks) this.append(c.stream, c.data, c.time);
    if (chunks.length > 0) this.runsStarted = this.runsEnded = 1;
  }

  beginRun(): void {
    this.runsStarted++;
  }

  endRun(): void {
    this.runsEnded = this.runsStarted;
    this.emit('run-end');
  }

  /** No more output will ever come (container removed): followers finish. */
  close(): void {
    this.closed = true;
    this.emit('run-end');
  }

  register(position: number): LogCursor {
    const cursor = { position: Math.max(position, this.start) };
    this.cursors.add(cursor);
    return cursor;
  }

  unregister(cursor: LogCursor): void {
    if (this.cursors.delete(cursor)) this.trim();
  }

  /** Call after moving a cursor forward, so fully read chunks can go. */
  advanced(): void {
    this.trim();
  }

  /** The chunk holding `offset`, or the first one after it when `offset` was dropped. */
  chunkAt(offset: number): LogChunk | undefined {
    const chunks = this.chunks;
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const c = chunks[mid]!;
      if (offset < c.offset) hi = mid - 1;
      else if (offset >= c.offset + c.data.length) lo = mid + 1;
      else return c;
    }
    return chunks[lo];
  }

  /** Offset where the last `lines` lines begin (a final newline ends the last line, it does not start one). */
  offsetForTail(lines: number): number {
    if (lines <= 0) return this.end;
    let seen = 0;
    let skipFinal = true;
    for (let i = this.chunks.length - 1; i >= 0; i--) {
      const c = this.chunks[i]!;
      for (let j = c.data.length - 1; j >= 0; j--) {
        if (c.data[j] !== 0x0a) {
          skipFinal = false;
          continue;
        }
        if (skipFinal) {
          skipFinal = false;
          continue;
        }
        if (++seen === lines) return c.offset + j + 1;
      }
    }
    return this.start;
  }

  private trim(): void {
    let slowest = Infinity;
    for (const c of this.cursors) slowest = Math.min(slowest, c.position);
    while (this.retained > this.capacity && this.chunks.length > 0) {
      const first = this.chunks[0]!;
      if (first.offset + first.data.length > slowest) break;
      this.chunks.shift();
      this.retained -= first.data.length;
    }
    const full = this.full;
    const drained = this.wasFull && !full;
    // Set before emitting: a 'drain' listener appends synchronously and re-enters trim().
    this.wasFull = full;
    if (drained) this.emit('drain');
  }
}

/** Wall-clock milliseconds with the monotonic clock's sub-millisecond part. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}
