import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { LocalExecProcess } from '../local/local-container.js';
import { descendants } from '../local/proc-stats.js';

/** How long an exec's end waits for its killed processes to go (a process stuck in the kernel). */
const GONE_WAIT_MS = 10_000;
const POLL_MS = 10;

/** A process's start time (field 22 of /proc/<pid>/stat), which tells it from a later one with its pid; undefined once it is gone or a zombie. */
async function startTime(pid: number): Promise<string | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return rest[0] === 'Z' || rest[0] === 'X' ? undefined : rest[19];
  } catch {
    return undefined;
  }
}

/**
 * An exec whose end is reported only once the processes it ran are gone. Its command runs in
 * the container's PID namespace under a launcher chain (shell, nsenter, bwrap) outside it. A
 * kill of the exec (its container ended) reaches the launcher's process group, and the launcher
 * may be reaped before the command, a child in the namespace, has finished dying: the exec would
 * read stopped while its command still ran. So the kill first takes the launcher's process tree
 * (host pids and start times), and the exec's `exited` then waits until each of them is gone
 * (or a zombie), for at most 10 s.
 */
export function endsWithItsTree(proc: LocalExecProcess): LocalExecProcess {
  let tree: Promise<{ pid: number; start: string }[]> | undefined;
  const kill = proc.kill.bind(proc);
  proc.kill = (signal) => {
    if (!tree) {
      const pids = descendants(proc.pid);
      tree = Promise.all(pids.map(async (pid) => ({ pid, start: await startTime(pid) }))).then((all) => all.filter((p): p is { pid: number; start: string } => p.start !== undefined));
    }
    kill(signal);
  };
  proc.exited = proc.exited.then(async (code) => {
    if (!tree) return code;
    let left = await tree;
    const until = Date.now() + GONE_WAIT_MS;
    while (left.length > 0 && Date.now() < until) {
      const alive = await Promise.all(left.map(async (p) => (await startTime(p.pid)) === p.start));
      left = left.filter((_, i) => alive[i]);
      if (left.length > 0) await delay(POLL_MS);
    }
    return code;
  });
  return proc;
}
