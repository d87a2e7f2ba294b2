import { describe, expect, test } from '@jest/globals';
import { parseScope, parseScopeList, ScopeSyntaxError } from '../../lib/index.js';

describe('a resource scope is type:name:actions with the actions after the last colon', () => {
  test('parses a plain repository scope', () => {
    expect(parseScope('repository:library/ubuntu:pull,push')).toEqual({
      type: 'repository', name: 'library/ubuntu', actions: ['pull', 'push'],
    });
  });
  test('keeps a host:port inside the name', () => {
    expect(parseScope('repository:localhost:5000/team/app:pull')).toEqual({
      type: 'repository', name: 'localhost:5000/team/app', actions: ['pull'],
    });
  });
  test('an upper-case first segment is a registry host, as in the reference grammar', () => {
    expect(parseScope('repository:MyRegistry/app:pull')).toEqual({ type: 'repository', name: 'MyRegistry/app', actions: ['pull'] });
  });
  test('keeps the ignored resource class apart from the type', () => {
    expect(parseScope('repository(plugin):a/b:pull')).toEqual({ type: 'repository', class: 'plugin', name: 'a/b', actions: ['pull'] });
  });
  test('accepts the * wildcard action of registry:catalog:*', () => {
    expect(parseScope('registry:catalog:*')).toEqual({ type: 'registry', name: 'catalog', actions: ['*'] });
  });
  test('drops empty and duplicate actions', () => {
    expect(parseScope('repository:a/b:pull,,pull').actions).toEqual(['pull']);
  });
});

describe('a malformed scope is a ScopeSyntaxError', () => {
  test.each([
    ['', 'empty'],
    ['repository', 'no colon'],
    ['repository:a', 'one colon'],
    [':a:pull', 'empty type'],
    ['Repo:a:pull', 'upper-case type'],
    ['repository::pull', 'empty name'],
    ['repository:A/B:pull', 'upper-case name'],
    ['repository:a//b:pull', 'empty component'],
    ['repository:a/b:PULL', 'upper-case action'],
    ['repository:a/b:pu"ll', 'quote in action'],
    ['repository:a"b:pull', 'quote in name'],
    [`repository:${'a'.repeat(300)}:pull`, 'name too long'],
  ])('rejects %j (%s)', (scope) => {
    expect(() => parseScope(scope)).toThrow(ScopeSyntaxError);
  });
  test('the error carries a stable code', () => {
    try {
      parseScope('x');
      throw new Error('unreachable');
    } catch (err) {
      expect((err as ScopeSyntaxError).code).toBe('ERR_SCOPE_SYNTAX');
    }
  });
});

describe('a scope list is space-separated, or repeated, and may be empty', () => {
  test('splits on spaces', () => {
    expect(parseScopeList('repository:a/b:pull repository:c/d:push')).toHaveLength(2);
  });
  test('accepts a repeated parameter', () => {
    expect(parseScopeList(['repository:a/b:pull', 'repository:c/d:push'])).toHaveLength(2);
  });
  test('an empty or absent scope asks for nothing', () => {
    expect(parseScopeList('')).toEqual([]);
    expect(parseScopeList(undefined)).toEqual([]);
  });
});
