import { spawn } from 'node:child_process';

/** How a peer program ended. */
export interface ProgramResult {
  /** Exit code; -1 when it was killed (time-out) or could not start. */
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runProgram}. */
export interface RunOptions {
  /** Written to stdin, then stdin is closed (`--password-stdin`, a tar for `docker import -`). Defaults to nothing (stdin closed). */
  input?: string | Buffer;
  /** Extra environment variables on top of the current environment. Defaults to none. */
  env?: NodeJS.ProcessEnv;
  /** False: the program gets `env` alone, not the current environment under it. Defaults to true. */
  inheritEnv?: boolean;
  /** Milliseconds before the program is killed. Defaults to 30000. */
  timeoutMs?: number;
}

/**
 * Runs a peer program (skopeo, ctr, docker) without a shell and collects its output. It never
 * rejects on a non-zero exit: the interop specs assert on the code and on what the program printed.
 *
 * @example
 * const { code, stdout } = await runProgram('skopeo', ['--version']);
 */
export function runProgram(cmd: string, args: readonly string[], options: RunOptions = {}): Promise<ProgramResult> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env: options.inheritEnv === false ? { ...options.env } : { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: stderr + String(err) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    child.stdin.on('error', () => { /* the program may exit before reading stdin */ });
    child.stdin.end(options.input ?? '');
  });
}
