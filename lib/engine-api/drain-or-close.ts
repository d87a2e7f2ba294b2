import type { Writable } from 'node:stream';

/**
 * Resolves when a full response can take more data, or when its client has gone: a client
 * that hangs up while its socket is full never emits `drain`, and waiting for that alone would
 * hold the route (and the runtime's stream) forever.
 *
 * @example
 * if (!res.write(chunk)) await drainOrClose(res);
 * if (res.destroyed) return;
 */
export function drainOrClose(res: Writable): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
