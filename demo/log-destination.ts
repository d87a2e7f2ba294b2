import { pino } from 'pino';

/** Log bytes held for a stdout that does not keep up (about 13,000 lines); past that, lines are dropped and counted. */
export const LOG_BUFFER_BYTES = 4 * 1024 * 1024;

/** Lines are gathered to this many bytes (about a dozen token-decision lines) before a write is started. */
export const LOG_BATCH_BYTES = 4096;

/** The longest a line waits in a part-filled batch before it is written anyway, in ms. */
export const LOG_FLUSH_MS = 100;

/** Where the demo's JSON lines go, and how many were dropped because the reader fell behind. */
export interface LogDestination {
  stream: ReturnType<typeof pino.destination>;
  /** Lines dropped so far because `maxBufferBytes` were already waiting for the reader. */
  dropped(): number;
}

/**
 * The demo's log lines on a file descriptor (stdout), written off the event loop (pino's
 * sonic-boom in asynchronous mode: a line is appended to a buffer and one write at a time is
 * handed to the libuv threadpool, so the lines of a busy moment go out in one write) and never
 * holding more than `maxBufferBytes`. pino's own default is the same writer with no bound: a
 * reader that stops (a paused terminal, `| less`, a slow pipe) made the buffer, the process's
 * memory and the cost of every later write grow without end (measured: RSS +27 MiB per 5 s of
 * refresh grants, throughput falling each round). Synchronous writes were not chosen: on a full
 * pipe sonic-boom then sleeps 100 ms with the event loop blocked.
 *
 * Lines are written in batches of {@link LOG_BATCH_BYTES}, or after {@link LOG_FLUSH_MS} when
 * fewer came: one write per line cost every token request a threadpool write of its own (the
 * write call, the pool's thread, the completion callback and the reader's wake-up), about 15 µs
 * of CPU per request of the demo as shipped (bench:token's demo row, measured by profile).
 *
 * What a crash loses: on exit, Ctrl-C or an uncaught exception pino flushes the buffer
 * synchronously; a SIGKILL or an out-of-memory abort loses the lines not yet written, which is
 * the lines of the last {@link LOG_FLUSH_MS} ms while the reader keeps up and at most
 * `maxBufferBytes` while it does not.
 */
export function logDestination(fd = 1, maxBufferBytes = LOG_BUFFER_BYTES): LogDestination {
  const stream = pino.destination({
    dest: fd, sync: false, maxLength: maxBufferBytes, minLength: Math.min(LOG_BATCH_BYTES, maxBufferBytes - 1), periodicFlush: LOG_FLUSH_MS,
  });
  let dropped = 0;
  stream.on('drop', () => {
    dropped += 1;
  });
  return { stream, dropped: () => dropped };
}
