import { Writable } from 'node:stream';
import type { IPty } from 'node-pty';
import type { LocalProcess } from './local-container.js';
import type { PipedControl } from './piped-process.js';

/**
 * A command on a pseudo-terminal (node-pty) as a {@link LocalProcess}: everything it writes is
 * one raw stream, delivered as stream 1 (a TTY carries bytes, not strings: node-pty must be
 * spawned with `encoding: null`); `exited` is the exit code, 128 + N when killed by signal N;
 * back-pressure pauses reading the master, so the command blocks once the pty buffer is full;
 * `resize(rows, cols)` resizes the terminal.
 *
 * @param withStdin - offer a stdin stream that types into the terminal.
 */
export function ptyProcess(
  term: IPty,
  output: (stream: 1 | 2, data: Buffer) => void,
  control: PipedControl,
  withStdin: boolean,
): LocalProcess {
  term.onData((data: string | Buffer) => output(1, Buffer.isBuffer(data) ? data : Buffer.from(data)));
  const exited = new Promise<number>((resolve) => {
    term.onExit(({ exitCode, signal }) => resolve(signal ? 128 + signal : exitCode));
  });
  const stdin = new Writable({
    write(chunk: Buffer, _encoding, done) {
      try {
        term.write(chunk as unknown as string);
        done();
      } catch (error) {
        done(error as Error);
      }
    },
  });
  return {
    pid: term.pid,
    ...(withStdin ? { stdin } : {}),
    exited,
    pause: () => term.pause(),
    resume: () => term.resume(),
    kill: (sig = 'SIGTERM') => control.kill(sig),
    ...(control.pids ? { pids: control.pids } : {}),
    resize: (rows: number, cols: number) => {
      if (rows > 0 && cols > 0) term.resize(cols, rows);
    },
  };
}
