import { open, type FileHandle } from 'node:fs/promises';
import type { OutputLog } from './output-log.js';
import { READ_BLOCK, RECORD_OVERHEAD, RECORD_TRAILER, payloadOf, recordAt } from './log-record.js';

/** Where a reader starts: a record, and how many of its payload bytes to skip. */
export interface LogStart {
  offset: number;
  skip: number;
}

/**
 * Where the last `lines` lines of the log begin, both streams counted (as dockerd's json-file
 * tail counts its lines before the stream filter). A final newline ends the last line; it does
 * not start one. Walks back through memory, then each file from its end by the records'
 * trailers, so only the end of the log is read. The caller's cursor must pin the log from
 * its start while this runs, so that no file is deleted under it.
 */
export async function tailStart(log: OutputLog, lines: number): Promise<LogStart> {
  if (lines <= 0) return { offset: log.end, skip: 0 };
  const counter = new LineCounter(lines);
  const memStart = log.memStart;
  for (const chunk of log.newestInMemory()) {
    const skip = counter.visit(chunk.data);
    if (skip !== undefined) return { offset: chunk.offset, skip };
  }
  const files = log.files;
  if (!files) return { offset: log.start, skip: 0 };
  for (const segment of [...files.segments].reverse()) {
    const end = Math.min(segment.size, memStart - segment.base);
    if (end <= 0) continue;
    let handle: FileHandle;
    try {
      handle = await open(segment.path, 'r');
    } catch {
      break;
    }
    try {
      for await (const { at, data } of backwards(handle, end)) {
        const skip = counter.visit(data);
        if (skip !== undefined) return { offset: segment.base + at, skip };
      }
    } finally {
      await handle.close();
    }
  }
  return { offset: log.start, skip: 0 };
}

/** Counts newlines from the end; answers the payload offset where the wanted line begins. */
class LineCounter {
  private seen = 0;
  private skipFinal = true;

  constructor(private readonly lines: number) {}

  visit(data: Buffer): number | undefined {
    for (let j = data.length - 1; j >= 0; j--) {
      if (data[j] !== 0x0a) {
        this.skipFinal = false;
        continue;
      }
      if (this.skipFinal) {
        this.skipFinal = false;
        continue;
      }
      if (++this.seen === this.lines) return j + 1;
    }
    return undefined;
  }
}

/** The records of a file before `end`, newest first, read a block at a time by their trailers. */
async function* backwards(handle: FileHandle, end: number): AsyncGenerator<{ at: number; data: Buffer }> {
  let blockStart = end;
  let block = Buffer.alloc(0);
  while (end > 0) {
    if (end - blockStart < RECORD_TRAILER || end - RECORD_OVERHEAD - block.readUInt32BE(end - blockStart - RECORD_TRAILER) < blockStart) {
      // The record does not lie whole in the block: read the block that ends where it ends.
      blockStart = Math.max(0, end - READ_BLOCK);
      block = Buffer.allocUnsafe(end - blockStart);
      const { bytesRead } = await handle.read(block, 0, block.length, blockStart);
      if (bytesRead !== block.length) return;
    }
    const length = block.readUInt32BE(end - blockStart - RECORD_TRAILER);
    const at = end - blockStart - RECORD_OVERHEAD - length;
    const r = at >= 0 ? recordAt(block, at) : undefined;
    if (!r) return;
    yield { at: blockStart + r.at, data: payloadOf(block, r) };
    end = blockStart + r.at;
  }
}
