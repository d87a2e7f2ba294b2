import { describe, expect, test } from '@jest/globals';
import { aclAuthorizer, type AclRule, type AuthorizationRequest } from '../../../lib/token/authz/index.js';

/** Whether a rule whose match.name is `pattern` matches a repository `name`. */
function nameMatches(pattern: string, name: string, request: Partial<AuthorizationRequest> = {}): boolean {
  const rules: AclRule[] = [{ match: { name: pattern }, actions: ['*'] }];
  const result = aclAuthorizer(rules)({
    account: 'alice',
    service: 'registry.local',
    ...request,
    scopes: [{ type: 'repository', name, actions: ['pull'] }],
  });
  return Array.isArray(result) && result.length === 1;
}

describe('a pattern without glob syntax is compared literally', () => {
  test.each([
    ['library/busybox', 'library/busybox', true],
    ['library/busybox', 'library/busybox2', false],
    ['library/busybox', 'library', false],
    ['a.b', 'axb', false],
  ])('%j against %j → %p', (pattern, name, expected) => {
    expect(nameMatches(pattern, name)).toBe(expected);
  });
});

describe('glob * and ? do not cross "/" (Go path.Match)', () => {
  test.each([
    ['alice/*', 'alice/app', true],
    ['alice/*', 'alice/a/b', false],
    ['alice/*', 'alice', false],
    ['*', 'app', true],
    ['*', 'a/b', false],
    ['*/*', 'a/b', true],
    ['a?c', 'abc', true],
    ['a?c', 'a/c', false],
    ['app-?', 'app-1', true],
    ['app-?', 'app-12', false],
    ['*/app', 'team/app', true],
    ['*/app', 'team/x/app', false],
  ])('%j against %j → %p', (pattern, name, expected) => {
    expect(nameMatches(pattern, name)).toBe(expected);
  });
});

describe('glob ** crosses "/" (dockgate extension for nested namespaces)', () => {
  test.each([
    ['alice/**', 'alice/app', true],
    ['alice/**', 'alice/a/b', true],
    ['alice/**', 'alice/a/b/c/d', true],
    ['alice/**', 'alicex/app', false],
    ['alice/**', 'bob/alice/app', false],
    ['**/cache', 'a/b/cache', true],
  ])('%j against %j → %p', (pattern, name, expected) => {
    expect(nameMatches(pattern, name)).toBe(expected);
  });
});

describe('glob classes [..] and escapes follow path.Match', () => {
  test.each([
    ['app[0-9]', 'app7', true],
    ['app[0-9]', 'appx', false],
    ['app[^0-9]', 'appx', true],
    ['app[^0-9]', 'app7', false],
    ['a[^x]b', 'a/b', false],
    ['a[!-0]b', 'a/b', false],
    ['a[\\-.]b', 'a.b', true],
    ['a[\\-.]b', 'a-b', true],
    ['a[\\-.]b', 'a_b', false],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'axb', false],
    ['v[12]', 'v2', true],
  ])('%j against %j → %p', (pattern, name, expected) => {
    expect(nameMatches(pattern, name)).toBe(expected);
  });
});

describe('/regex/ patterns are anchored: the whole value must match', () => {
  test.each([
    ['/team-[a-z]+\\/.*/', 'team-red/app', true],
    ['/team-[a-z]+\\/.*/', 'x/team-red/app', false],
    ['/app/', 'app', true],
    ['/app/', 'myapp', false],
    ['/app/', 'app2', false],
    ['/a|b/', 'a', true],
    ['/a|b/', 'ab', false],
    ['/.*/', 'any/thing/at/all', true],
  ])('%j against %j → %p', (pattern, name, expected) => {
    expect(nameMatches(pattern, name)).toBe(expected);
  });
});

describe('${…} variables are replaced by the request values, which match literally', () => {
  test('${account} is the requesting account', () => {
    expect(nameMatches('${account}/*', 'alice/app')).toBe(true);
    expect(nameMatches('${account}/*', 'bob/app')).toBe(false);
  });
  test('an account holding glob syntax does not become a wildcard', () => {
    expect(nameMatches('${account}/*', 'ab/app', { account: 'a*' })).toBe(false);
    expect(nameMatches('${account}/*', 'ax/app', { account: 'a?' })).toBe(false);
    expect(nameMatches('${account}/*', 'a/app', { account: '[a]' })).toBe(false);
  });
  test('an account holding regex syntax does not change a /regex/ pattern', () => {
    expect(nameMatches('/${account}\\/.+/', 'ab/app', { account: 'a.' })).toBe(false);
    expect(nameMatches('/${account}\\/.+/', 'a./app', { account: 'a.' })).toBe(true);
    expect(nameMatches('/${account}\\/.+/', 'x/app', { account: '.*' })).toBe(false);
  });
  test('${service} and ${type} are the request\'s service and the resource type', () => {
    expect(nameMatches('${type}s/${service}', 'repositorys/registry.local')).toBe(true);
    expect(nameMatches('${type}s/${service}', 'repositorys/other')).toBe(false);
  });
  test('${name} is the requested resource name', () => {
    const rules: AclRule[] = [{ match: { account: '${name}' }, actions: ['*'] }];
    const ask = (account: string, name: string) =>
      aclAuthorizer(rules)({ account, service: 's', scopes: [{ type: 'repository', name, actions: ['pull'] }] });
    expect(ask('tools', 'tools')).toHaveLength(1);
    expect(ask('tools', 'other')).toHaveLength(0);
  });
  test('${labels:KEY} matches any one of the label values, each literally', () => {
    const labels = { team: ['red', 'b*'] };
    expect(nameMatches('${labels:team}/*', 'red/app', { labels })).toBe(true);
    expect(nameMatches('${labels:team}/*', 'b*/app', { labels })).toBe(true);
    expect(nameMatches('${labels:team}/*', 'blue/app', { labels })).toBe(false);
  });
  test('${labels:KEY} of a missing label matches nothing', () => {
    expect(nameMatches('${labels:team}/*', 'red/app')).toBe(false);
    expect(nameMatches('/(${labels:team})?.*/', 'red/app')).toBe(false);
  });
  test('the anonymous account substitutes as "", so ${account}/* matches no repository', () => {
    expect(nameMatches('${account}/*', 'app', { account: '' })).toBe(false);
  });
});
