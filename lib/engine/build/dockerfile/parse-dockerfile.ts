import { EngineError } from '../../../engine-api/engine-error.js';

/** One instruction of a Dockerfile, as the classic builder's parser leaves it. */
export interface DockerfileInstruction {
  /** The instruction keyword, lower case (`from`, `run`, …). */
  keyword: string;
  /** Everything after the keyword, continuation lines joined, leading and trailing blanks trimmed. */
  args: string;
  /** The instruction as written on one line (what `Step N/M : …` prints). */
  original: string;
  /** 1-based line the instruction starts on. */
  line: number;
}

/** A parsed Dockerfile: its escape character (parser directive `escape`) and instructions. */
export interface ParsedDockerfile {
  escape: '\\' | '`';
  instructions: DockerfileInstruction[];
}

/** The instructions the classic builder knows (moby's `command` package). */
export const INSTRUCTIONS: ReadonlySet<string> = new Set([
  'add', 'arg', 'cmd', 'copy', 'entrypoint', 'env', 'expose', 'from', 'healthcheck', 'label', 'maintainer',
  'onbuild', 'run', 'shell', 'stopsignal', 'user', 'volume', 'workdir',
]);

const DIRECTIVE = /^#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.+?)\s*$/;
const HEREDOC = /^(?:--\S+\s+)*<<-?\s*(["']?)[A-Za-z_][A-Za-z0-9_]*\1/;

/** dockerd's words for a Dockerfile it cannot read: 400 before any build output. */
export function parseError(line: number, message: string): EngineError {
  return EngineError.invalidParameter(`dockerfile parse error line ${line}: ${message}`);
}

/**
 * Parses a Dockerfile as the classic builder does (moby's buildkit `parser.Parse`): parser
 * directives at the top (`# escape=` is honoured, `# syntax=` is the frontend's and ignored),
 * comment lines dropped (also between continuation lines), a line ending in the escape character
 * continued on the next, empty lines skipped. An unknown instruction is dockerd's 400
 * `dockerfile parse error line N: unknown instruction: X`; a heredoc (`RUN <<EOF`), which only
 * BuildKit reads, is refused naming it instead of being run as shell text.
 *
 * @example
 * parseDockerfile('FROM busybox\nRUN echo \\\n  hi\n').instructions[1].args; // 'echo   hi'
 */
export function parseDockerfile(text: string): ParsedDockerfile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  let escape: '\\' | '`' = '\\';
  let index = 0;
  // Directives: only before the first non-directive line (a comment or an instruction ends them).
  const seen = new Set<string>();
  for (; index < lines.length; index++) {
    const match = DIRECTIVE.exec(lines[index] as string);
    if (!match) break;
    const name = (match[1] as string).toLowerCase();
    if (seen.has(name)) throw parseError(index + 1, `only one ${name} parser directive can be used`);
    seen.add(name);
    if (name === 'escape') {
      const value = match[2] as string;
      if (value !== '\\' && value !== '`') throw parseError(index + 1, `invalid escape token '${value}' does not match ${'`'} or \\`);
      escape = value;
    }
  }
  const instructions: DockerfileInstruction[] = [];
  const continued = new RegExp(`${escape === '\\' ? '\\\\' : '`'}[ \\t]*$`);
  while (index < lines.length) {
    const raw = lines[index] as string;
    const start = index + 1;
    index++;
    if (isBlankOrComment(raw)) continue;
    let joined = '';
    let line = raw;
    // A line continues while it ends with the escape character; comments and blank lines in between are dropped.
    for (;;) {
      if (!continued.test(line)) {
        joined += line;
        break;
      }
      joined += line.replace(continued, '');
      let next: string | undefined;
      while (index < lines.length) {
        next = lines[index] as string;
        index++;
        if (!isBlankOrComment(next)) break;
        next = undefined;
      }
      if (next === undefined) break;
      line = next;
    }
    const trimmed = joined.trim();
    const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed);
    if (!match) continue;
    const keyword = (match[1] as string).toLowerCase();
    if (!INSTRUCTIONS.has(keyword)) throw parseError(start, `unknown instruction: ${(match[1] as string).toUpperCase()}`);
    const args = (match[2] ?? '').trim();
    if ((keyword === 'run' || keyword === 'copy' || keyword === 'add') && HEREDOC.test(args)) {
      throw parseError(start, `heredocs (${keyword.toUpperCase()} <<…) are not supported by the classic builder; write the lines as a shell command or a file in the build context`);
    }
    instructions.push({ keyword, args, original: trimmed, line: start });
  }
  return { escape, instructions };
}

function isBlankOrComment(line: string): boolean {
  const t = line.trim();
  return t === '' || t.startsWith('#');
}
