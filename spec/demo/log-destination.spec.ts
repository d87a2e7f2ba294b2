import { describe, expect, test } from '@jest/globals';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { LOG_FLUSH_MS, logDestination } from '../../demo/log-destination.js';
import { until } from '../support/until.js';

/**
 * A real pipe (a FIFO) whose reader (cat, into a pipe this spec reads) can be paused and resumed.
 * The write end is a descriptor of its own, which the destination owns and closes: a child's
 * stdin handle would be closed twice (by the destination and by the handle), and the late
 * EBADF would surface in whatever spec runs next.
 */
function pausedReader() {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-log-destination-'));
  const fifo = join(dir, 'pipe');
  execFileSync('mkfifo', ['-m', '0600', fifo]);
  const cat = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
  cat.stdout.pause();
  // Opened after cat: the open of a FIFO's write end waits for its reader.
  const fd = openSync(fifo, 'w');
  let text = '';
  return {
    fd,
    resume: () => cat.stdout.on('data', (chunk: Buffer) => { text += chunk.toString('utf8'); }).resume(),
    lines: () => text.split('\n').filter(Boolean),
    stop: () => {
      cat.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('the demo\'s log lines never block the event loop and never hold more than a bounded buffer', () => {
  test('a stalled stdout gets the first lines, the rest past the bound are dropped and counted, and logging goes on at once', async () => {
    const reader = pausedReader();
    try {
      const bound = 256 * 1024;
      const logs = logDestination(reader.fd, bound);
      const logger = pino({ base: null, timestamp: false }, logs.stream);
      const filler = 'x'.repeat(200);
      const count = 20_000; // about 4.5 MiB of lines: far past the pipes' and the buffer's room
      const started = performance.now();
      for (let i = 0; i < count; i += 1) logger.info({ i, filler }, 'line');
      // Never waited on the reader: appending 20,000 lines takes milliseconds, not 100 ms sleeps.
      expect(performance.now() - started).toBeLessThan(2000);
      expect(logs.dropped()).toBeGreaterThan(count / 2);
      reader.resume();
      expect(await until(async () => reader.lines().length + logs.dropped() === count, 10_000)).toBe(true);
      const seen = reader.lines().map((line) => JSON.parse(line) as { i: number; msg: string });
      // What was kept is the oldest lines, whole and in order: the bound cuts the newest.
      expect(seen[0]).toEqual({ level: 30, i: 0, filler, msg: 'line' });
      expect(seen.map((l) => l.i)).toEqual(seen.map((_, n) => n));
      // Kept: the bound plus what the pipes between here and the reader hold (64 KiB each on Linux).
      expect(reader.lines().join('\n').length).toBeLessThan(bound + 3 * 64 * 1024);
      logs.stream.end();
    } finally {
      reader.stop();
    }
  });

  test('lines are written in batches, and a lone line still reaches the reader within the flush interval', async () => {
    const reader = pausedReader();
    try {
      reader.resume();
      const logs = logDestination(reader.fd);
      const logger = pino({ base: null, timestamp: false }, logs.stream);
      logger.info({ n: 1 }, 'alone');
      // Far below LOG_BATCH_BYTES: held back at first, written by the periodic flush.
      expect(reader.lines()).toEqual([]);
      const started = performance.now();
      expect(await until(async () => reader.lines().length === 1, 5_000)).toBe(true);
      expect(performance.now() - started).toBeLessThan(LOG_FLUSH_MS + 1000);
      expect(JSON.parse(reader.lines()[0]!)).toEqual({ level: 30, n: 1, msg: 'alone' });
      logs.stream.end();
    } finally {
      reader.stop();
    }
  });
});
