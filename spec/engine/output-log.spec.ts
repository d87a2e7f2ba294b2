import { describe, test, expect } from '@jest/globals';
import { OutputLog } from '../../lib/engine/runtime/local/output-log.js';
import { LogReader } from '../../lib/engine/runtime/local/log-reader.js';

const kb = (n: number): Buffer => Buffer.alloc(n * 1024, 0x61);

describe('container output is bounded', () => {
  test('without readers, only the last `capacity` bytes are kept (whole chunks)', () => {
    const log = new OutputLog(4096);
    for (let i = 0; i < 10; i++) log.append(1, kb(1));
    expect(log.end).toBe(10 * 1024);
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
    cursor.position = 6 * 1024;
    log.advanced();
    expect(log.full).toBe(false);
    expect(drained).toBe(1);
    expect(log.start).toBeGreaterThan(0);
    log.unregister(cursor);
  });
  test('tail finds the start of the last N lines; a final newline does not start a line', () => {
    const log = new OutputLog(1 << 20);
    log.append(1, Buffer.from('a\nb'));
    log.append(2, Buffer.from('\nc\n'));
    expect(log.offsetForTail(1)).toBe(4);
    expect(log.offsetForTail(2)).toBe(2);
    expect(log.offsetForTail(9)).toBe(0);
    expect(log.offsetForTail(0)).toBe(log.end);
  });
});

describe('a follower reads everything, at its own pace, and ends with the run', () => {
  test('a slow reader of 4 MiB through a 64 KiB log loses nothing', async () => {
    const log = new OutputLog(64 * 1024);
    log.beginRun();
    const reader = new LogReader(log, { from: 0, untilRunsEnded: 1, multiplexed: false, stdout: true, stderr: true, timestamps: false });
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
    expect(maxRetained).toBeLessThanOrEqual(64 * 1024 + 16 * 1024);
  });
});
