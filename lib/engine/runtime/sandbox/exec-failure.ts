import type { LocalProcess } from '../local/local-container.js';

type Output = (stream: 1 | 2, data: Buffer) => void;

/** What bubblewrap prints when its final execvp fails, before it exits 1 (bwrap.c: `die_with_error ("execvp %s", argv[0])`). */
const PREFIX = Buffer.from('bwrap: execvp ');
const LINE = /^bwrap: execvp (.*): ([^\r\n]*)\r?\n$/s;

/** The longest line held back while it may still be bubblewrap's execvp failure. */
const MAX_HELD = 4096;

/**
 * dockerd's answer to an exec whose command cannot be run (runc's words, as `docker exec C nosuch`
 * prints them): exit code 126 and this line on stdout. A name without a slash is looked up in
 * PATH, where a file that is not executable does not count (Go's exec.LookPath); a path is
 * stat'ed, then executed.
 */
export function dockerdExecFailure(command: string, reason: string): string {
  const why = reason.toLowerCase();
  const detail = !command.includes('/') && (why === 'no such file or directory' || why === 'permission denied')
    ? 'executable file not found in $PATH'
    : why === 'no such file or directory' ? `stat ${command}: no such file or directory` : why;
  return `OCI runtime exec failed: exec failed: unable to start container process: exec: "${command}": ${detail}: unknown\r\n`;
}

/**
 * An exec's output passed through, except bubblewrap's own "execvp" failure: the first bytes of
 * output are held back while they may still be that line, and when the exec then ends with
 * bubblewrap's status 1, the line is replaced by dockerd's message and the exit code by 126
 * (where bwrap says 1 for everything). Anything else, or any other output first, flows as it came.
 * Under a Tty the line arrives on the one stream there is, with the terminal's \r\n.
 */
export function withExecFailure(output: Output): { output: Output; exited: (proc: LocalProcess) => LocalProcess } {
  let held: { stream: 1 | 2; data: Buffer } | undefined;
  let passing = false;
  const flush = (): void => {
    if (held) output(held.stream, held.data);
    held = undefined;
    passing = true;
  };
  const wrapped: Output = (stream, data) => {
    if (passing) return output(stream, data);
    const next = held ? (held.stream === stream ? Buffer.concat([held.data, data]) : undefined) : data;
    const newline = next?.indexOf(0x0a) ?? -1;
    const mayBe = next !== undefined && next.length <= MAX_HELD
      && next.subarray(0, PREFIX.length).equals(PREFIX.subarray(0, Math.min(PREFIX.length, next.length)))
      && (newline === -1 || newline === next.length - 1);
    if (!mayBe) {
      flush();
      output(stream, data);
      return;
    }
    held = { stream, data: next };
  };
  const exited = (proc: LocalProcess): LocalProcess => {
    proc.exited = proc.exited.then((code) => {
      const line = held ? LINE.exec(held.data.toString('utf8')) : null;
      if (code === 1 && line) {
        held = undefined;
        passing = true;
        output(1, Buffer.from(dockerdExecFailure(line[1]!, line[2]!)));
        return 126;
      }
      flush();
      return code;
    });
    return proc;
  };
  return { output: wrapped, exited };
}
