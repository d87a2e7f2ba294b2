import { describe, test, expect } from '@jest/globals';
import { parseDockerfile } from '../../../lib/engine/build/dockerfile/parse-dockerfile.js';
import { commandForm, nameValues, splitFlags } from '../../../lib/engine/build/dockerfile/instruction-args.js';
import { planBuild } from '../../../lib/engine/build/build-plan.js';

const parse = (text: string) => parseDockerfile(text).instructions.map((i) => [i.keyword, i.args]);

describe('a line ending in the escape character continues on the next; comment and blank lines between are dropped', () => {
  test('backslash continuation joins the lines', () => {
    expect(parse('FROM a\nRUN echo \\\n  hi \\\n  there\n')).toEqual([['from', 'a'], ['run', 'echo   hi   there']]);
  });
  test('a comment inside a continued instruction is dropped', () => {
    expect(parse('RUN a \\\n# note\n  b\n')).toEqual([['run', 'a   b']]);
  });
  test('the Step line shows the joined instruction as written', () => {
    expect(parseDockerfile('RUN echo "$A from \\\n  x"\n').instructions[0]?.original).toBe('RUN echo "$A from   x"');
  });
});

describe('comments: a line whose first non-blank character is # is not an instruction', () => {
  test('comments and blank lines are skipped; the line number is kept', () => {
    const parsed = parseDockerfile('# c\n\nFROM a\n  # indented\nCMD x\n');
    expect(parsed.instructions.map((i) => [i.keyword, i.line])).toEqual([['from', 3], ['cmd', 5]]);
  });
});

describe('parser directives: `# escape=` at the top sets the escape character', () => {
  test('escape=` makes the backtick continue lines and the backslash plain', () => {
    const parsed = parseDockerfile('# escape=`\nFROM a\nRUN dir c:\\ `\n  /w\n');
    expect(parsed.escape).toBe('`');
    expect(parsed.instructions[1]?.args).toBe('dir c:\\   /w');
  });
  test('a directive after an instruction is a comment', () => {
    expect(parseDockerfile('FROM a\n# escape=`\n').escape).toBe('\\');
  });
  test('an escape other than \\ or ` is dockerd\'s 400', () => {
    expect(() => parseDockerfile('# escape=x\nFROM a\n')).toThrow("dockerfile parse error line 1: invalid escape token 'x' does not match ` or \\");
  });
});

describe('an unknown instruction is dockerd\'s 400 naming it and its line', () => {
  test('FOO on line 2', () => {
    expect(() => parseDockerfile('FROM a\nFOO bar\n')).toThrow('dockerfile parse error line 2: unknown instruction: FOO');
  });
});

describe('heredocs are BuildKit\'s: the classic builder refuses them by name instead of running them as shell text', () => {
  test.each(['RUN <<EOF\necho\nEOF\n', 'COPY <<-"X" /f\nx\nX\n', 'RUN --mount=type=cache <<EOF\nx\nEOF\n'])('%j', (text) => {
    expect(() => parseDockerfile(`FROM a\n${text}`)).toThrow(/heredocs .* are not supported by the classic builder/);
  });
  test('a shell here-string later in the command is not a heredoc', () => {
    expect(parse('RUN cat <<<hi\n')).toEqual([['run', 'cat <<<hi']]);
  });
});

describe('exec form is a JSON array of strings; anything else is the shell form', () => {
  test('JSON array → exec', () => expect(commandForm('["echo", "a b"]')).toEqual({ exec: ['echo', 'a b'] }));
  test('broken JSON → shell text', () => expect(commandForm("['echo']")).toEqual({ shell: "['echo']" }));
  test('array of non-strings → shell text', () => expect(commandForm('[1, 2]')).toEqual({ shell: '[1, 2]' }));
});

describe('flags (--from, --chown…) lead the arguments; an unknown one is dockerd\'s "Unknown flag"', () => {
  test('known flags are split off', () => {
    expect(splitFlags('--from=build --chown=1:2 a b/', ['from', 'chown'])).toEqual({ flags: new Map([['from', 'build'], ['chown', '1:2']]), rest: 'a b/' });
  });
  test('unknown flag', () => expect(() => splitFlags('--mount=x a', ['from'])).toThrow('Unknown flag: mount'));
});

describe('ENV and LABEL take name=value pairs (quotes kept for expansion) or the legacy `name value` form', () => {
  test('pairs', () => expect(nameValues('ENV', 'A=1 B="two words"')).toEqual([['A', '1'], ['B', '"two words"']]));
  test('legacy form: the rest of the line is the value', () => expect(nameValues('ENV', 'A one two')).toEqual([['A', 'one two']]));
  test('a word without = among pairs is dockerd\'s syntax error', () => {
    expect(() => nameValues('ENV', 'A=1 B')).toThrow('Syntax error - can\'t find = in "B". Must be of the form: name=value');
  });
});

describe('stages: ARGs before the first FROM, a stage per FROM, the target cuts the rest, labels add a LABEL step', () => {
  const parsed = parseDockerfile('ARG V=1\nFROM a AS build\nRUN x\nFROM b AS final\nCMD y\nFROM c\n');
  test('step total counts meta ARGs, FROMs and instructions, as dockerd prints them', () => {
    expect(planBuild(parsed, undefined, {}).total).toBe(6);
  });
  test('target stops at the named stage (case-insensitive)', () => {
    const plan = planBuild(parsed, 'FINAL', {});
    expect(plan.stages.map((s) => s.name)).toEqual(['build', 'final']);
    expect(plan.total).toBe(5);
  });
  test('an unknown target is dockerd\'s message', () => {
    expect(() => planBuild(parsed, 'nope', {})).toThrow('failed to reach build target nope in Dockerfile');
  });
  test('labels become a last LABEL step', () => {
    const plan = planBuild(parsed, undefined, { a: 'b c' });
    expect(plan.stages[2]?.instructions.at(-1)?.original).toBe('LABEL "a"="b c"');
    expect(plan.total).toBe(7);
  });
  test('an instruction other than ARG before FROM is refused', () => {
    expect(() => planBuild(parseDockerfile('RUN x\nFROM a\n'), undefined, {})).toThrow('Please provide a source image with `from` prior to commit');
  });
});
