/**
 * ACL globs as a Thompson automaton, simulated state-set by state-set (no backtracking), so a
 * match costs at most (pattern states × name length) character tests whatever the input. The
 * RegExp translation this replaces backtracked: `*-*-*-*-*-x` against a 253-character name of
 * `a-` pairs took seconds per scope, and names come from requests.
 *
 * Syntax: Go's `path.Match` (`*` and `?` never match `/`, `[…]` classes with ranges and `^`,
 * `\` escapes) plus `**`, which crosses `/`.
 */

/** One character of the name: does it fit this step? */
type CharTest = (char: string) => boolean;

/** A parsed piece of a glob, or of a value substituted into one. */
export type GlobPiece =
  | { kind: 'char'; test: CharTest }
  | { kind: 'star'; crossesSlash: boolean }
  /** Any one of these literal strings (the values of a `${labels:KEY}` variable). */
  | { kind: 'either'; options: readonly string[] };

/** Counts the character tests a match made, for specs and benchmarks that check the bound. */
export interface MatchSteps {
  count: number;
}

/** A compiled glob. */
export interface GlobAutomaton {
  /** Number of states: a match makes at most `states × value.length` character tests. */
  readonly states: number;
  matches(value: string, steps?: MatchSteps): boolean;
}

const notSlash: CharTest = (char) => char !== '/';
const anyChar: CharTest = () => true;

/** The pieces of a literal string: one exact character each. */
export function literalPieces(text: string): GlobPiece[] {
  return [...text].map((expected) => ({ kind: 'char', test: (char: string) => char === expected }));
}

/** Parses a `path.Match` class after its `[`; returns the test and the index after `]`. */
function parseClass(glob: string, start: number): { test: CharTest; end: number } {
  let i = start;
  const negated = glob[i] === '^';
  if (negated) i++;
  const ranges: Array<[string, string]> = [];
  const readChar = (): string => {
    const char = glob[i];
    if (char === undefined) throw new Error('has an unclosed "["');
    if (char === '\\') {
      const escaped = glob[i + 1];
      if (escaped === undefined) throw new Error('ends with an unfinished "\\" escape');
      i += 2;
      return escaped;
    }
    if (char === '-' || char === ']') throw new Error(`has an unescaped "${char}" in a "[…]" class`);
    i++;
    return char;
  };
  for (;;) {
    if (glob[i] === ']' && ranges.length > 0) break;
    const low = readChar();
    let high = low;
    if (glob[i] === '-') {
      i++;
      high = readChar();
      if (high < low) throw new Error(`has a reversed range "${low}-${high}" in a "[…]" class`);
    }
    ranges.push([low, high]);
  }
  const inRanges = (char: string) => ranges.some(([low, high]) => char >= low && char <= high);
  // path.Match: a class never matches the separator, negated or not.
  return { test: (char) => char !== '/' && inRanges(char) !== negated, end: i + 1 };
}

/**
 * Parses glob text into pieces.
 *
 * @throws {Error} describing a syntax problem (`has an unclosed "["`…); the caller names the rule.
 */
export function parseGlob(glob: string): GlobPiece[] {
  const pieces: GlobPiece[] = [];
  let i = 0;
  while (i < glob.length) {
    const char = glob[i] as string;
    if (char === '*') {
      const crossesSlash = glob[i + 1] === '*';
      while (glob[i] === '*') i++;
      pieces.push({ kind: 'star', crossesSlash });
    } else if (char === '?') {
      pieces.push({ kind: 'char', test: notSlash });
      i++;
    } else if (char === '\\') {
      const escaped = glob[i + 1];
      if (escaped === undefined) throw new Error('ends with an unfinished "\\" escape');
      pieces.push(...literalPieces(escaped));
      i += 2;
    } else if (char === '[') {
      const cls = parseClass(glob, i + 1);
      pieces.push({ kind: 'char', test: cls.test });
      i = cls.end;
    } else {
      pieces.push(...literalPieces(char));
      i++;
    }
  }
  return pieces;
}

/** A state: consumes one character fitting `test` and moves to `out[0]`, or (no test) moves to every `out` for free. */
interface State {
  test?: CharTest;
  out: number[];
}

/**
 * Compiles pieces into an automaton. The accepting state is the index one past the last state.
 *
 * @example
 * compileGlob(parseGlob('alice/*')).matches('alice/app') // true
 */
export function compileGlob(pieces: readonly GlobPiece[]): GlobAutomaton {
  const states: State[] = [];
  for (const piece of pieces) {
    const at = states.length;
    if (piece.kind === 'char') {
      states.push({ test: piece.test, out: [at + 1] });
    } else if (piece.kind === 'star') {
      // at: skip or enter the loop; at+1: one character, then back to at.
      states.push({ out: [at + 1, at + 2] }, { test: piece.crossesSlash ? anyChar : notSlash, out: [at] });
    } else {
      const fork: State = { out: [] };
      states.push(fork);
      const ends: State[] = [];
      for (const option of piece.options) {
        if (option.length === 0) {
          ends.push(fork);
          continue;
        }
        fork.out.push(states.length);
        for (const expected of option) states.push({ test: (char) => char === expected, out: [states.length + 1] });
        ends.push(states[states.length - 1] as State);
      }
      // Every option's last character (or the fork itself, for an empty option) leads past the piece.
      const after = states.length;
      for (const end of ends) {
        if (end === fork) fork.out.push(after);
        else end.out = [after];
      }
    }
  }
  const accept = states.length;
  const size = accept + 1;

  return {
    states: size,
    matches(value, steps) {
      // Two state sets as arrays plus "seen in this step" marks: no allocation per character.
      let current: number[] = [];
      let next: number[] = [];
      const seen = new Int32Array(size).fill(-1);
      const stack: number[] = [];
      const add = (start: number, set: number[], step: number) => {
        stack.push(start);
        while (stack.length > 0) {
          const index = stack.pop() as number;
          if (seen[index] === step) continue;
          seen[index] = step;
          const state = states[index];
          if (state === undefined || state.test) set.push(index);
          else for (const out of state.out) stack.push(out);
        }
      };
      add(0, current, 0);
      for (let position = 0; position < value.length; position++) {
        const char = value[position] as string;
        next.length = 0;
        for (const index of current) {
          const state = states[index];
          if (state?.test === undefined) continue;
          if (steps) steps.count += 1;
          if (state.test(char)) add(state.out[0] as number, next, position + 1);
        }
        if (next.length === 0) return false;
        [current, next] = [next, current];
      }
      return current.includes(accept);
    },
  };
}
