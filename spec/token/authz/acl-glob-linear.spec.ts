import { describe, expect, test } from '@jest/globals';
import { aclAuthorizer } from '../../../lib/token/authz/index.js';
import { compileGlob, parseGlob, type MatchSteps } from '../../../lib/token/authz/glob-automaton.js';

/** The valid 253-character repository name `a-a-…-a` (127 components joined by "-"). */
const NAME = Array.from({ length: 127 }, () => 'a').join('-');

describe('ACL globs match in linear time: at most (states × name length) character tests, no backtracking', () => {
  test('the name is the 253-character one of the report', () => {
    expect(NAME).toHaveLength(253);
  });

  test('*-*-*-*-*-x against a-a-…-a is refused within states × length character tests', () => {
    const automaton = compileGlob(parseGlob('*-*-*-*-*-x'));
    const steps: MatchSteps = { count: 0 };
    expect(automaton.matches(NAME, steps)).toBe(false);
    expect(steps.count).toBeGreaterThan(0);
    expect(steps.count).toBeLessThanOrEqual(automaton.states * NAME.length);
  });

  test('the work per character stays under the state count however long the name (a backtracking matcher grows as length^5 here)', () => {
    const automaton = compileGlob(parseGlob('*-*-*-*-*-x'));
    for (const value of [NAME, `${NAME}-${NAME}`, Array.from({ length: 8 }, () => NAME).join('-')]) {
      const steps: MatchSteps = { count: 0 };
      expect(automaton.matches(value, steps)).toBe(false);
      expect(steps.count / value.length).toBeLessThanOrEqual(automaton.states);
    }
  });

  test('** and classes keep the bound too, and a matching name still matches', () => {
    const automaton = compileGlob(parseGlob('**-[a-z]*-**-*-x'));
    const steps: MatchSteps = { count: 0 };
    expect(automaton.matches(NAME, steps)).toBe(false);
    expect(steps.count).toBeLessThanOrEqual(automaton.states * NAME.length);
    expect(automaton.matches(`${NAME}-x`)).toBe(true);
  });

  test('through aclAuthorizer, the pattern against the name is answered (denied), and a name ending in -x granted', () => {
    const authorize = aclAuthorizer([{ match: { name: '*-*-*-*-*-x' }, actions: ['pull'] }]);
    const ask = (name: string) => authorize({ account: 'alice', service: 's', scopes: [{ type: 'repository', name, actions: ['pull'] }] });
    expect(ask(NAME)).toEqual([]);
    expect(ask(`${NAME.slice(0, 251)}-x`)).toEqual([{ type: 'repository', name: `${NAME.slice(0, 251)}-x`, actions: ['pull'] }]);
  });
});
