import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { signalNumber } from '../../../engine-api/signal.js';
import type { LocalProcess } from './local-container.js';

/** How one runtime signals and lists a piped child's container (the rest is the same for all). */
export interface PipedControl {
  kill(signal: NodeJS.Signals): void;
  pids?(): number[];
}

/**
 * What {@link pipedProcess} reads of a child: a ChildProcess, or one spawned elsewhere that gives
 * the same pipes and events (`spawn`, `error`, `close`), linux/off-loop-command.ts' OffLoopProcess.
 */
export interface PipedChild {
  readonly pid?: number | undefined;
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  once(event: 'error', listener: (error: Error) => void): unknown;
  once(event: 'spawn', listener: () => void): unknown;
  off(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * A child spawned with piped stdout and stderr as a {@link LocalProcess}: each chunk goes to
 * `output` with its stream number, `exited` resolves once the pipes are drained with the exit
 * code as dockerd reports it (128 + N when killed by signal N), and back-pressure pauses the
 * pipes. Resolves once the child runs; rejects when it cannot start (ENOENT, EACCES).
 *
 * @param control - called with the child's pid once it runs: how to signal it and list its processes.
 */
export function pipedProcess(
  child: PipedChild,
  output: (stream: 1 | 2, data: Buffer) => void,
  control: (pid: number) => PipedControl,
): Promise<LocalProcess> {
  const exited = new Promise<number>((resolve) => {
    child.on('close', (code, signal) => resolve(code ?? 128 + (signal ? signalNumber(signal) : 0)));
  });
  return new Promise<LocalProcess>((resolve, reject) => {
    child.once('error', reject);
    child.once('spawn', () => {
      child.off('error', reject);
      child.on('error', () => undefined);
      // The pipes are there once it runs (an OffLoopProcess receives them just before `spawn`).
      const stdout = child.stdout!;
      const stderr = child.stderr!;
      stdout.on('data', (d: Buffer) => output(1, d));
      stderr.on('data', (d: Buffer) => output(2, d));
      // A container that exits before reading its stdin must not turn the write into an 'error' crash.
      child.stdin?.on('error', () => undefined);
      const pid = child.pid ?? 0;
      const { kill, pids } = control(pid);
      resolve({
        pid,
        ...(child.stdin ? { stdin: child.stdin } : {}),
        exited,
        pause: () => { stdout.pause(); stderr.pause(); },
        resume: () => { stdout.resume(); stderr.resume(); },
        kill: (sig = 'SIGTERM') => kill(sig),
        ...(pids ? { pids } : {}),
      });
    });
  });
}

/** Signals the child's whole process group (it was spawned `detached`), or the child alone when the group is gone. */
export function groupKiller(child: ChildProcess): (signal: NodeJS.Signals) => void {
  return (signal) => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
}
