import type { ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';

/** How long a holder may take to say its namespace is up. */
const READY_TIMEOUT_MS = 10_000;

/**
 * Waits for a process that holds a namespace (the engine's user namespace, a network's hub) to
 * say it is up: its first line on stdout. Rejects, naming `what`, when it does not within 10 s,
 * when `program` cannot run, or when it ends first (`ended`: with its stderr's first 2 KiB, or
 * its status); the caller stops it. Resolves with the reader of its stdout, for what follows.
 */
export async function holderReady(child: ChildProcess, program: string, what: { timeout: string; ended: string }): Promise<Interface> {
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (errors.length < 2048) errors += chunk.toString('utf8');
  });
  child.stdin?.on('error', () => undefined);
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what.timeout} did not come up in ${READY_TIMEOUT_MS / 1000}s`)), READY_TIMEOUT_MS);
    const ended = (): void => {
      clearTimeout(timer);
      reject(new Error(`${what.ended}: ${errors.trim() || `status ${String(child.exitCode ?? child.signalCode)}`}`));
    };
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot run ${program}: ${error.message}`));
    });
    if (child.exitCode !== null || child.signalCode !== null) ended();
    else child.once('exit', ended);
    lines.once('line', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return lines;
}

/** The holder never keeps the server alive: it ends with the server (its stdin closes). */
export function unrefHolder(child: ChildProcess): void {
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
}
