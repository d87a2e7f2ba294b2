import type { Readable, Writable } from 'node:stream';

/**
 * A container output stream. Bytes are already in wire form: stdcopy frames when
 * `multiplexed` (no TTY), raw bytes otherwise. It is a plain Readable, so a slow client slows
 * the source down (back-pressure) instead of growing a buffer.
 */
export interface OutputStream {
  stream: Readable;
  multiplexed: boolean;
}

/** An attach session: output to the client and, when requested and open, the container's stdin. */
export interface AttachSession extends OutputStream {
  stdin?: Writable;
  /**
   * The end of the client's input must not end `stdin`: dockerd closes a container's stdin then
   * only for StdinOnce without a TTY, and otherwise ends the attach instead. Defaults to false
   * (the client's end is passed on, as a forwarding runtime must).
   */
  keepStdinOpen?: boolean;
  /** The exec's own `DetachKeys` (exec create), when it named any; the route's default otherwise. */
  detachKeys?: string;
}
