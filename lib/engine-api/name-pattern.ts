import { EngineError } from './engine-error.js';
import type { EngineFilters } from './filters.js';

/**
 * A `name` filter value of a list (containers, networks, volumes), as dockerd matches it: a
 * regular expression (Go's RE2) tested against the name, so `docker ps -f name=web` finds `web-1`
 * and `name=^web$` finds `web` only; a container's name is tested with and without its leading
 * `/` (`slashed`). A value that is not a valid expression matches nothing, as in dockerd.
 *
 * Go's engine runs in linear time; JavaScript's backtracks, and a filter is caller input tested
 * against every container's name: `(a+)+$` on a name of 30 `a`s would hold the event loop for
 * minutes. So the expressions taken are the ones whose backtracking stays small: literal
 * characters and escapes, `.`, bracket classes, `^` first and `$` last, and `?`, `*`, `+` after
 * a single character or class, with at most one `*` or `+` in the whole value. Groups,
 * alternation, braces and a second unbounded repeat are a 400 naming the value, rather than a
 * filter that silently matches something else.
 *
 * @example
 * namePattern('^web$', true)('/web'); // true
 * namePattern('web')('/api'); // false
 */
export function namePattern(value: string, slashed = false): (name: string) => boolean {
  let regex: RegExp;
  try {
    regex = new RegExp(value);
  } catch {
    // Not an expression (an unclosed "(", a stray "*"…): nothing matches, as in dockerd. Go's
    // flags and named groups (`(?i)`, `(?P<n>…)`) are expressions there, though: refused below.
    if (!value.includes('(?')) return () => false;
    regex = /$^/;
  }
  const problem = unsupported(value);
  if (problem) throw EngineError.invalidParameter(`invalid filter 'name=${value}': ${problem}; supported are characters, escapes, ".", [classes], ^ first, $ last, and ?, * or + after one character (at most one * or +)`);
  if (!slashed) return (name) => regex.test(name);
  return (name) => {
    const bare = name.startsWith('/') ? name.slice(1) : name;
    return regex.test(`/${bare}`) || regex.test(bare);
  };
}

/**
 * A list's `name` filter as one test, its values compiled once per request (each a
 * {@link namePattern}): true when there is no such filter or any value matches.
 */
export function nameFilter(filters: EngineFilters, slashed = false): (name: string) => boolean {
  const tests = [...(filters.get('name') ?? [])].map((value) => namePattern(value, slashed));
  return tests.length === 0 ? () => true : (name) => tests.some((test) => test(name));
}

/** What in `source` is outside the subset {@link namePattern} takes, or undefined. */
function unsupported(source: string): string | undefined {
  let unbounded = 0;
  let atom = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === '\\') {
      i++;
      atom = true;
    } else if (ch === '[') {
      const end = classEnd(source, i);
      if (end === -1) return 'an unclosed, empty or nested [class]';
      i = end;
      atom = true;
    } else if (ch === '?' || ch === '*' || ch === '+') {
      if (!atom) return `"${ch}" after something other than one character or class`;
      if (ch !== '?' && ++unbounded > 1) return 'more than one * or +';
      // A lazy or possessive suffix would be a second quantifier.
      if (source[i + 1] === '?' || source[i + 1] === '+' || source[i + 1] === '*') return `"${ch}${source[i + 1]}"`;
      atom = false;
    } else if (ch === '(' || ch === ')' || ch === '|') {
      return `"${ch}" (groups and alternation)`;
    } else if (ch === '{' || ch === '}') {
      return `"${ch}" (counted repeats)`;
    } else if (ch === '^') {
      if (i !== 0) return '"^" not at the start';
      atom = false;
    } else if (ch === '$') {
      if (i !== source.length - 1) return '"$" not at the end';
      atom = false;
    } else {
      atom = true;
    }
  }
  return undefined;
}

/** Index of the `]` closing the class opened at `open`, or -1. */
function classEnd(source: string, open: number): number {
  let i = open + 1;
  if (source[i] === '^') i++;
  // A `]` right after the opening is a literal in Go but ends an empty class in JavaScript: refused.
  for (; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === '[') return -1;
    else if (source[i] === ']') return i > open + 1 ? i : -1;
  }
  return -1;
}
