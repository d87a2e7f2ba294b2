import { spawn } from 'node:child_process';
import { spawnPty as ptySpawn } from './node-pty.js';
import type { LocalExecProcess } from './local-container.js';
import { groupKiller, pipedProcess } from './piped-process.js';
import { ptyProcess } from './pty-process.js';
import { envRecord } from './env-record.js';

/** How to start one exec'd command. */
export interface ExecSpawn {
  file: string;
  args: string[];
  argv0?: string;
  cwd: string;
  env: string[];
  /** On a pseudo-terminal (node-pty): both streams arrive as one, raw, on stream 1. */
  tty: boolean;
  stdin: boolean;
  /** `[height, width]`; defaults to 24×80 for a TTY. */
  consoleSize?: [number, number];
  output: (stream: 1 | 2, data: Buffer) => void;
}

/**
 * Spawns an exec'd command as a child process (its own process group, so a kill reaches what it
 * started), or on a pseudo-terminal through node-pty when the exec asked for a TTY.
 */
export function spawnExec(run: ExecSpawn): Promise<LocalExecProcess> {
  const env = envRecord(run.env);
  return run.tty ? spawnPty(run, env) : spawnPiped(run, env);
}

function spawnPiped(run: ExecSpawn, env: Record<string, string>): Promise<LocalExecProcess> {
  const child = spawn(run.file, run.args, {
    ...(run.argv0 ? { argv0: run.argv0 } : {}),
    cwd: run.cwd,
    env,
    stdio: [run.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    shell: false,
    detached: true,
  });
  return pipedProcess(child, run.output, () => ({ kill: groupKiller(child) }));
}

async function spawnPty(run: ExecSpawn, env: Record<string, string>): Promise<LocalExecProcess> {
  const [rows = 24, cols = 80] = run.consoleSize && run.consoleSize[0] > 0 && run.consoleSize[1] > 0 ? run.consoleSize : [];
  // Bytes, not strings: a TTY carries whatever the program writes, UTF-8 or not.
  const term = ptySpawn(run.file, run.args, { name: env.TERM ?? 'xterm', cols, rows, cwd: run.cwd, env, encoding: null });
  const kill = (sig: NodeJS.Signals): void => {
    try {
      term.kill(sig);
    } catch {
      // already gone
    }
  };
  return ptyProcess(term, run.output, { kill }, true);
}
