import { describe, test, expect } from '@jest/globals';
import { processWord, processWords } from '../../../lib/engine/build/dockerfile/substitute.js';

const vars = new Map([['A', 'x'], ['EMPTY', ''], ['SP', 'two words']]);
const word = (w: string, escape = '\\') => processWord(w, vars, escape);

describe('$NAME and ${NAME} expand; an unset name is empty', () => {
  test.each([['$A', 'x'], ['${A}', 'x'], ['a${A}b', 'axb'], ['$UNSET-', '-'], ['${A}_$A', 'x_x']])('%s → %s', (w, out) => expect(word(w)).toBe(out));
  test('$ before a character that starts no name is a literal $; $5 is a (never set) positional parameter', () => expect(word('cost: $5 and $ $-')).toBe('cost:  and $ $-'));
});

describe('${NAME:-word} and ${NAME-word}: the default when unset or empty / when unset', () => {
  test.each([['${UNSET:-d}', 'd'], ['${EMPTY:-d}', 'd'], ['${A:-d}', 'x'], ['${UNSET-d}', 'd'], ['${EMPTY-d}', ''], ['${UNSET:-$A}', 'x']])('%s → %s', (w, out) => expect(word(w)).toBe(out));
});

describe('${NAME:+word} and ${NAME+word}: the alternative when set and non-empty / when set', () => {
  test.each([['${A:+alt}', 'alt'], ['${EMPTY:+alt}', ''], ['${UNSET:+alt}', ''], ['${EMPTY+alt}', 'alt']])('%s → %s', (w, out) => expect(word(w)).toBe(out));
});

describe('${NAME:?message} fails the build when the name is unset', () => {
  test('unset', () => expect(() => word('${UNSET:?need it}')).toThrow('UNSET: need it'));
  test('set', () => expect(word('${A:?need it}')).toBe('x'));
});

describe('quotes: single quotes are literal, double quotes expand; both are removed', () => {
  test.each([["'$A'", '$A'], ['"$A"', 'x'], ['"a \'$A\'"', "a 'x'"], ['"\\$A"', '$A'], ['"a\\nb"', 'a\\nb']])('%s → %s', (w, out) => expect(word(w)).toBe(out));
  test('an unterminated quote is refused', () => expect(() => word('"abc')).toThrow('unexpected end of statement while looking for matching double-quote'));
});

describe('the escape character takes the next character literally', () => {
  test('\\$A is literal', () => expect(word('\\$A')).toBe('$A'));
  test('with `# escape=`` the backtick escapes and the backslash is plain', () => expect(word('`$A\\x', '`')).toBe('$A\\x'));
});

describe('words split on blanks outside quotes; an expanded value is not split again (as Docker)', () => {
  test('split', () => expect(processWords('80/tcp "$SP" $SP', vars)).toEqual(['80/tcp', 'two words', 'two words']));
});
