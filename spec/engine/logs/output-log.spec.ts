import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { appendFileSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputLog, WRITE_BATCH, WRITE_DELAY_MS } from '../../../lib/engine/runtime/local/output-log.js';
import { LINE_FRAMES_UP_TO, LogReader, lostLine, type LogReaderOptions } from '../../../lib/engine/runtime/local/log-reader.js';
import { LogFiles } from '../../../lib/engine/runtime/local/log-files.js';
import { RECORD_OVERHEAD } from '../../../lib/engine/runtime/local/log-record.js';
import { FrameDecoder } from '../../../lib/engine/index.js';

const kb = (n: number): Buffer => Buffer.alloc(n * 1024, 0x61);
const raw = { multiplexed: false, stdout: true, stderr: true, timestamps: false } as const;
const tmp = (): string => mkdtempSync(join(tmpdir(), 'dockgate-log-'));
const onDisk = (dir: string, maxSize = 1 << 30, maxFile = 1, capacity = 1 << 20): OutputLog =>
  new OutputLog({ capacity, files: LogFiles.open(dir, { maxSize, maxFile }) });

async function readAll(log: OutputLog, options: Partial<LogReaderOptions> = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of new LogReader(log, { from: log.start, stopAt: log.end, ...raw, ...options })) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('without files, container output is bounded in memory', () => {
  test('without readers, only about `capacity` bytes are kept (whole records)', () => {
    const log = new OutputLog(4096);
    for (let i = 0; i < 10; i++) log.append(1, kb(1));
    expect(log.end).toBe(10 * (1024 + RECORD_OVERHEAD));
    expect(log.end - log.start).toBeLessThanOrEqual(4096);
    expect(log.full).toBe(false);
  });
  test('unread bytes of a registered reader are kept: the log reports full, then drains as it reads', () => {
    const log = new OutputLog(4096);
    const cursor = log.register(0);
    let drained = 0;
    log.on('drain', () => drained++);
    for (let i = 0; i < 8; i++) log.append(1, kb(1));
    expect(log.start).toBe(0);
    expect(log.full).toBe(true);
    cursor.position = 6 * (1024 + RECORD_OVERHEAD);
    log.advanced();
    expect(log.full).toBe(false);
    expect(drained).toBe(1);
    expect(log.start).toBeGreaterThan(0);
    log.unregister(cursor);
  });
  test('with the none driver nothing is kept for a later reader', async () => {
    const log = new OutputLog({ capacity: 4096, keep: false });
    log.append(1, Buffer.from('gone\n'));
    expect(log.start).toBe(log.end);
    expect((await readAll(log)).length).toBe(0);
  });
});

describe('tail starts at the last N lines; a final newline does not start a line', () => {
  const cases: [number, string][] = [[1, 'c\n'], [2, 'b\nc\n'], [9, 'a\nb\nc\n'], [0, '']];
  for (const inFiles of [false, true]) {
    test(`${inFiles ? 'from the files' : 'in memory'}: tail=1, 2, 9, 0`, async () => {
      const log = inFiles ? onDisk(tmp()) : new OutputLog(1 << 20);
      log.append(1, Buffer.from('a\nb'));
      log.append(2, Buffer.from('\nc\n'));
      await log.settled();
      for (const [tail, text] of cases) expect((await readAll(log, { tail })).toString()).toBe(text);
    });
  }
});

describe('output goes to the files as it comes', () => {
  test('each chunk is on disk once the write it joined is done, as records a restarted server reads back', async () => {
    const dir = tmp();
    const log = onDisk(dir);
    log.append(1, Buffer.from('one\n'), 1000);
    log.append(2, Buffer.from('two\n'), 2000);
    await log.settled();
    expect(statSync(join(dir, '000001.log')).size).toBe(8 + 2 * RECORD_OVERHEAD);
    const again = onDisk(dir);
    const frames = new FrameDecoder().push(await readAll(again, { multiplexed: true }));
    expect(frames.map((f) => [f.stream, f.payload.toString()])).toEqual([[1, 'one\n'], [2, 'two\n']]);
    expect((await readAll(again, { timestamps: true })).toString()).toBe('1970-01-01T00:00:01Z one\n1970-01-01T00:00:02Z two\n');
  });
  test('a record cut short by a crash is cut off when the files are opened again', async () => {
    const dir = tmp();
    const log = onDisk(dir);
    log.append(1, Buffer.from('whole\n'));
    await log.settled();
    appendFileSync(join(dir, '000001.log'), Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 1, 0, 0]));
    const again = onDisk(dir);
    expect((await readAll(again)).toString()).toBe('whole\n');
    again.append(1, Buffer.from('after\n'));
    await again.settled();
    expect((await readAll(onDisk(dir))).toString()).toBe('whole\nafter\n');
  });
  test('memory holds only the backlog not yet written', async () => {
    const log = onDisk(tmp());
    for (let i = 0; i < 64; i++) log.append(1, kb(16));
    await log.settled();
    expect(log.memStart).toBe(log.end);
  });
});

describe('while a container runs, output reaches the files in batches: WRITE_BATCH bytes, or WRITE_DELAY_MS after it came', () => {
  // Fake timers decide when the batch timer fires; file writes and their callbacks stay real.
  const fakeTimers = () => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'performance', 'Date'] });
  afterEach(() => {
    jest.useRealTimers();
  });
  const sizeOf = (dir: string): number => {
    try {
      return statSync(join(dir, '000001.log')).size;
    } catch {
      return 0;
    }
  };
  /** Lets real I/O complete: true once `ready`, false after many loop turns without it. */
  const settle = async (ready: () => boolean): Promise<boolean> => {
    for (let i = 0; i < 2000 && !ready(); i++) await new Promise((r) => setImmediate(r));
    return ready();
  };
  const running = (dir: string): OutputLog => {
    const log = onDisk(dir);
    log.beginRun();
    return log;
  };

  test('a few bytes wait for the timer, and are on disk once WRITE_DELAY_MS have passed', async () => {
    fakeTimers();
    const dir = tmp();
    const log = running(dir);
    log.append(1, Buffer.from('line\n'));
    expect(await settle(() => sizeOf(dir) > 0)).toBe(false);
    jest.advanceTimersByTime(WRITE_DELAY_MS - 1);
    expect(await settle(() => sizeOf(dir) > 0)).toBe(false);
    jest.advanceTimersByTime(1);
    expect(await settle(() => sizeOf(dir) === 5 + RECORD_OVERHEAD)).toBe(true);
  });
  test('a full batch is written without waiting for the timer; the bytes after it wait', async () => {
    fakeTimers();
    const dir = tmp();
    const log = running(dir);
    for (let i = 0; i < WRITE_BATCH / 1024 + 8; i++) log.append(1, kb(1));
    // Written, and dropped from memory once the write is done.
    expect(await settle(() => log.memStart >= WRITE_BATCH)).toBe(true);
    expect(sizeOf(dir)).toBe(log.memStart);
    expect(sizeOf(dir)).toBeLessThan(log.end);
    jest.advanceTimersByTime(WRITE_DELAY_MS);
    expect(await settle(() => log.memStart === log.end)).toBe(true);
    expect(sizeOf(dir)).toBe(log.end);
  });
  test('when the run ends, what waits is written at once', async () => {
    fakeTimers();
    const dir = tmp();
    const log = running(dir);
    log.append(2, Buffer.from('last words\n'));
    log.endRun();
    expect(await settle(() => sizeOf(dir) === 11 + RECORD_OVERHEAD)).toBe(true);
  });
  test('settled() writes what waits at once and resolves once it is on disk', async () => {
    fakeTimers();
    const dir = tmp();
    const log = running(dir);
    log.append(1, Buffer.from('asked for\n'));
    let done = false;
    void log.settled().then(() => (done = true));
    expect(await settle(() => done)).toBe(true);
    expect(sizeOf(dir)).toBe(10 + RECORD_OVERHEAD);
  });
});

describe('rotation keeps at most max-file files of about max-size', () => {
  test('8 KiB files, 3 kept: the oldest are deleted and readers read the files kept, in order', async () => {
    const dir = tmp();
    const log = onDisk(dir, 8 * 1024, 3);
    for (let i = 0; i < 100; i++) {
      log.append(1, Buffer.from(`line ${String(i).padStart(4, '0')} ${'x'.repeat(200)}\n`));
      await log.settled();
    }
    const files = readdirSync(dir).sort();
    expect(files.length).toBe(3);
    for (const f of files) expect(statSync(join(dir, f)).size).toBeLessThanOrEqual(8 * 1024 + 256);
    const lines = (await readAll(log)).toString().trim().split('\n').map((l) => Number(l.slice(5, 9)));
    expect(lines[lines.length - 1]).toBe(99);
    expect(lines).toEqual(lines.map((_, i) => lines[0]! + i));
    expect(lines.length).toBeGreaterThan(60);
  });
});

/** Lines of 1 KiB, each starting with its number: `count` of them from `from`. */
const numbered = (from: number, count: number): Buffer =>
  Buffer.from(Array.from({ length: count }, (_, i) => `${String(from + i).padStart(8, '0')} ${'x'.repeat(1014)}\n`).join(''));

/** A multiplexed follower's frames: its stdout lines' numbers, and its stderr lines. */
async function followed(reader: LogReader): Promise<{ numbers: number[]; told: string[]; toldAt: number[] }> {
  const decoder = new FrameDecoder();
  const numbers: number[] = [];
  const told: string[] = [];
  const toldAt: number[] = [];
  for await (const chunk of reader) {
    for (const f of decoder.push(chunk as Buffer)) {
      if (f.stream === 2) {
        told.push(f.payload.toString());
        toldAt.push(numbers.length);
      } else for (const line of f.payload.toString().split('\n').filter((l) => l !== '')) numbers.push(Number(line.slice(0, 8)));
    }
  }
  return { numbers, told, toldAt };
}

const consecutive = (xs: number[]): void => expect(xs).toEqual(xs.map((_, i) => xs[0]! + i));

describe('rotation never waits for a reader: the producer is not paused, and a reader that falls behind is told what it lost', () => {
  const muxed = { multiplexed: true, stdout: true, stderr: true, timestamps: false } as const;
  test('a follower that has not read yet: 16 MiB through 256 KiB × 2 files never reports full; it gets one line with the bytes deleted, then the rest', async () => {
    const dir = tmp();
    const log = onDisk(dir, 256 * 1024, 2, 1 << 20);
    log.beginRun();
    // Before, its cursor at 0 held the first file, and `full` paused the producer after 512 KiB.
    const reader = new LogReader(log, { from: 0, untilRunsEnded: 1, ...muxed });
    for (let n = 0; n < 16 * 1024; n += 64) {
      log.append(1, numbered(n, 64));
      expect(log.full).toBe(false);
      if (n % 512 === 0) await log.settled();
    }
    await log.settled();
    expect(readdirSync(dir).length).toBeLessThanOrEqual(2);
    const deleted = log.start;
    log.endRun();
    const { numbers, told, toldAt } = await followed(reader);
    expect(told).toEqual([`${lostLine(deleted)}\n`]);
    expect(toldAt).toEqual([0]);
    consecutive(numbers);
    expect(numbers[numbers.length - 1]).toBe(16 * 1024 - 1);
  });
  test('a follower in a file when rotation deletes it reads that file to its end from its descriptor, then is told what it lost', async () => {
    const dir = tmp();
    const log = onDisk(dir, 4 << 20, 2, 1 << 20);
    log.beginRun();
    log.append(1, numbered(0, 64));
    await log.settled();
    const reader = new LogReader(log, { from: 0, untilRunsEnded: 1, ...muxed });
    // It opens the first file and reads a block (1 MiB at most), then its consumer stops.
    await new Promise((resolve) => reader.once('readable', resolve));
    for (let n = 64; n < 16 * 1024; n += 64) {
      log.append(1, numbered(n, 64));
      if (n % 1024 === 0) await log.settled();
    }
    await log.settled();
    expect(readdirSync(dir).length).toBeLessThanOrEqual(2);
    log.endRun();
    const { numbers, told, toldAt } = await followed(reader);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^dockgate: \d+ bytes of this log's files were deleted by rotation/);
    // The first file read whole (about 4 MiB: past the block it had when it stopped), then from the oldest file kept.
    const before = numbers.slice(0, toldAt[0]);
    const after = numbers.slice(toldAt[0]);
    consecutive(before);
    consecutive(after);
    expect(before[0]).toBe(0);
    expect(before.length).toBeGreaterThan(3 * 1024);
    expect(after[0]).toBeGreaterThan(before[before.length - 1]! + 1);
    expect(after[after.length - 1]).toBe(16 * 1024 - 1);
  });
  test('a reader that did not ask for stderr skips what was deleted without a line (nothing is added to its stdout)', async () => {
    const log = onDisk(tmp(), 64 * 1024, 2, 1 << 20);
    log.beginRun();
    const reader = new LogReader(log, { from: 0, untilRunsEnded: 1, ...muxed, stderr: false });
    for (let n = 0; n < 1024; n += 64) {
      log.append(1, numbered(n, 64));
      await log.settled();
    }
    log.endRun();
    const { numbers, told } = await followed(reader);
    expect(told).toEqual([]);
    consecutive(numbers);
    expect(numbers[numbers.length - 1]).toBe(1023);
  });
});

describe('a follower reads the files, then the live output, with no gap and no duplicate at the seam', () => {
  test('a counter written while a follower joins late is read back whole, in order', async () => {
    const log = onDisk(tmp(), 64 * 1024, 4);
    log.beginRun();
    let n = 0;
    const write = (count: number): void => {
      for (let i = 0; i < count; i++) log.append(1, Buffer.from(`${n++}\n`));
    };
    write(500);
    await log.settled();
    write(100); // some written, some still in memory when the follower starts
    const reader = new LogReader(log, { from: log.start, untilRunsEnded: 1, ...raw });
    const chunks: Buffer[] = [];
    const reading = (async () => {
      for await (const c of reader) chunks.push(c as Buffer);
    })();
    for (let round = 0; round < 20; round++) {
      write(50);
      await new Promise((r) => setTimeout(r, 1));
    }
    await log.settled();
    log.endRun();
    await reading;
    const seen = Buffer.concat(chunks).toString().trim().split('\n').map(Number);
    expect(seen).toEqual(seen.map((_, i) => seen[0]! + i));
    expect(seen[seen.length - 1]).toBe(n - 1);
    expect(seen[0]).toBe(0);
  });
  test('follow with tail: the last lines from the files, then what comes, once each', async () => {
    const log = onDisk(tmp(), 256, 3);
    log.beginRun();
    for (let i = 0; i < 40; i++) log.append(1, Buffer.from(`${i}\n`));
    await log.settled();
    const reader = new LogReader(log, { from: log.start, tail: 2, untilRunsEnded: 1, ...raw });
    const chunks: Buffer[] = [];
    const reading = (async () => {
      for await (const c of reader) chunks.push(c as Buffer);
    })();
    await new Promise((r) => setTimeout(r, 20));
    log.append(1, Buffer.from('40\n41\n'));
    await log.settled();
    log.endRun();
    await reading;
    expect(Buffer.concat(chunks).toString()).toBe('38\n39\n40\n41\n');
  });
  test('a slow reader of 4 MiB through a 64 KiB log without files loses nothing', async () => {
    const log = new OutputLog(64 * 1024);
    log.beginRun();
    const reader = new LogReader(log, { from: 0, untilRunsEnded: 1, ...raw });
    let produced = 0;
    let maxRetained = 0;
    const produce = (): void => {
      while (produced < 4 * 1024 * 1024 && !log.full) {
        log.append(1, kb(16));
        produced += 16 * 1024;
        maxRetained = Math.max(maxRetained, log.end - log.start);
      }
      if (produced >= 4 * 1024 * 1024) log.endRun();
      else log.once('drain', produce);
    };
    produce();
    let received = 0;
    for await (const chunk of reader) {
      received += (chunk as Buffer).length;
      await new Promise((r) => setImmediate(r));
    }
    expect(received).toBe(4 * 1024 * 1024);
    expect(maxRetained).toBeLessThanOrEqual(64 * 1024 + 16 * (1024 + RECORD_OVERHEAD) + RECORD_OVERHEAD);
  });
});

describe('since and until select records by time; until ends the stream', () => {
  test('records before since and after until are left out', async () => {
    const log = onDisk(tmp());
    log.append(1, Buffer.from('a\n'), 1000);
    log.append(1, Buffer.from('b\n'), 2000);
    log.append(1, Buffer.from('c\n'), 3000);
    await log.settled();
    expect((await readAll(log, { since: 1500, until: 2500 })).toString()).toBe('b\n');
    expect((await readAll(log, { since: 2000 })).toString()).toBe('b\nc\n');
  });
});

describe('docker logs frames: a frame per line for a write of a few lines, frames of whole lines for a burst', () => {
  const lines = (from: number, count: number): Buffer => Buffer.from(Array.from({ length: count }, (_, i) => `line ${from + i}\n`).join(''));
  const framesOf = async (log: OutputLog): Promise<string[]> =>
    new FrameDecoder().push(await readAll(log, { multiplexed: true, lineFrames: true })).map((f) => f.payload.toString());
  test.each([false, true])(`up to LINE_FRAMES_UP_TO lines in one write: one frame each; more: one frame of them all (files: %s)`, async (inFiles) => {
    const log = inFiles ? onDisk(tmp()) : new OutputLog(1 << 20);
    log.append(1, lines(0, LINE_FRAMES_UP_TO));
    log.append(1, lines(100, LINE_FRAMES_UP_TO + 1));
    log.append(1, Buffer.from('a\nb\npartial'));
    log.append(1, Buffer.from(' end\n'));
    await log.settled();
    const frames = await framesOf(log);
    expect(frames).toEqual([
      ...Array.from({ length: LINE_FRAMES_UP_TO }, (_, i) => `line ${i}\n`),
      lines(100, LINE_FRAMES_UP_TO + 1).toString(),
      'a\n', 'b\n', 'partial', ' end\n',
    ]);
  });
});
