import { describe, expect, test } from '@jest/globals';
import { accessRecords, missingAccess } from '../../lib/bearer/access/missing-access.js';
import { bearerTokenFrom } from '../../lib/bearer/http/bearer-token-from.js';
import { parseRequiredScopes } from '../../lib/bearer/access/required-scopes.js';
import { grantsAll } from '../../lib/bearer/access/missing-access.js';
import { ScopeSyntaxError } from '../../lib/scope/index.js';

const repo = (name: string, ...actions: string[]) => ({ type: 'repository', name, actions });

describe('the access claim must cover every required action', () => {
  test('all actions granted: nothing missing', () => {
    expect(missingAccess([repo('a/b', 'pull', 'push')], [repo('a/b', 'push', 'pull')])).toEqual([]);
  });
  test('each missing action is reported separately', () => {
    expect(missingAccess([repo('a/b', 'pull', 'push')], [repo('a/b', 'pull')])).toEqual([{ type: 'repository', name: 'a/b', action: 'push' }]);
  });
  test('a granted * covers any action of that resource only', () => {
    expect(missingAccess([repo('a/b', 'delete')], [repo('a/b', '*')])).toEqual([]);
    expect(missingAccess([repo('a/c', 'pull')], [repo('a/b', '*')])).toHaveLength(1);
  });
  test('a required * is covered only by a granted *', () => {
    const catalog = { type: 'registry', name: 'catalog', actions: ['*'] };
    expect(missingAccess([catalog], [{ type: 'registry', name: 'catalog', actions: ['pull'] }])).toHaveLength(1);
    expect(missingAccess([catalog], [catalog])).toEqual([]);
  });
  test('type and name must match exactly; the class of a required scope is ignored', () => {
    expect(missingAccess([{ type: 'repository', class: 'plugin', name: 'a/b', actions: ['pull'] }], [repo('a/b', 'pull')])).toEqual([]);
    expect(missingAccess([repo('a/b', 'pull')], [{ type: 'registry', name: 'a/b', actions: ['pull'] }])).toHaveLength(1);
    expect(missingAccess([repo('a/b', 'pull')], [repo('A/b', 'pull')])).toHaveLength(1);
  });
  test('nothing required: any access (even none) is enough', () => {
    expect(missingAccess([], [])).toEqual([]);
  });
  test('accessRecords lists one record per action, keeping the class', () => {
    expect(accessRecords([{ type: 'repository', class: 'plugin', name: 'a/b', actions: ['pull', 'push'] }])).toEqual([
      { type: 'repository', class: 'plugin', name: 'a/b', action: 'pull' },
      { type: 'repository', class: 'plugin', name: 'a/b', action: 'push' },
    ]);
  });
});

describe('the success path (grantsAll) decides exactly as missingAccess does', () => {
  const catalog = { type: 'registry', name: 'catalog', actions: ['*'] };
  test.each([
    [[repo('a/b', 'pull', 'push')], [repo('a/b', 'push', 'pull')]],
    [[repo('a/b', 'pull', 'push')], [repo('a/b', 'pull')]],
    [[repo('a/b', 'delete')], [repo('a/b', '*')]],
    [[repo('a/c', 'pull')], [repo('a/b', '*')]],
    [[catalog], [{ type: 'registry', name: 'catalog', actions: ['pull'] }]],
    [[catalog], [catalog]],
    [[{ type: 'repository', class: 'plugin', name: 'a/b', actions: ['pull'] }], [repo('a/b', 'pull')]],
    [[repo('a/b', 'pull')], [{ type: 'registry', name: 'a/b', actions: ['pull'] }]],
    [[repo('a/b', 'pull'), repo('c/d', 'pull')], [repo('a/b', 'pull')]],
    [[], []],
  ])('required %j, granted %j', (required, granted) => {
    expect(grantsAll(required, granted)).toBe(missingAccess(required, granted).length === 0);
  });
});

describe('required scopes follow the scope grammar, one resource scope per string', () => {
  test('a name with host:port and a class are understood; same resources merge', () => {
    expect(parseRequiredScopes(['repository(plugin):localhost:5000/a/b:pull', 'repository:localhost:5000/a/b:push'])).toEqual([
      { type: 'repository', name: 'localhost:5000/a/b', actions: ['pull', 'push'] },
    ]);
  });
  test('an empty list requires nothing', () => {
    expect(parseRequiredScopes([])).toEqual([]);
  });
  test('a space does not split a string into two scopes (no scope smuggling through a name)', () => {
    expect(() => parseRequiredScopes('repository:x:pull registry:catalog:pull')).toThrow(ScopeSyntaxError);
  });
  test.each(['repository:a/b', 'repository::pull', 'repository:A/B:pull', 'repository:a/b:pull"', 'repo:a\r\nb:pull'])('%j is a syntax error', (s) => {
    expect(() => parseRequiredScopes(s)).toThrow(ScopeSyntaxError);
  });
  test('a scope with no action and a value that is not a string are TypeErrors', () => {
    expect(() => parseRequiredScopes('repository:a/b:')).toThrow(TypeError);
    expect(() => parseRequiredScopes(42)).toThrow(TypeError);
    expect(() => parseRequiredScopes([42])).toThrow(TypeError);
  });
});

describe('the Authorization header holds exactly "bearer" (any case) and the token, as registry 2.8 reads it', () => {
  test.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['Bearer ', ''],
  ])('%j → %j', (header, token) => {
    expect(bearerTokenFrom(header)).toBe(token);
  });
  test.each([undefined, 'Basic YTpi', 'Bearer  abc', 'Bearer abc def', 'Bearerabc', ' Bearer abc', 'Bearer\tabc'])('%j counts as no token', (header) => {
    expect(bearerTokenFrom(header)).toBeUndefined();
  });
});
