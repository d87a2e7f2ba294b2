import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResourceScope } from '../../../lib/scope/index.js';
import {
  aclAuthorizer,
  type AclDecision,
  type AclRule,
  type AuthorizationRequest,
} from '../../../lib/token/authz/index.js';

const SERVICE = 'registry.local';

function repo(name: string, ...actions: string[]): ResourceScope {
  return { type: 'repository', name, actions };
}

/** Grants for one request; the ACL authorizer is synchronous, so its result is used directly. */
function decide(rules: AclRule[], request: Partial<AuthorizationRequest> & { scopes: ResourceScope[] }): ResourceScope[] {
  const result = aclAuthorizer(rules)({ account: 'alice', service: SERVICE, ...request });
  if (!Array.isArray(result)) throw new Error('aclAuthorizer must answer synchronously');
  return result;
}

/** Actions granted on one resource name (`[]` when the resource is absent from the grant). */
function granted(rules: AclRule[], name: string, request: Partial<AuthorizationRequest> = {}, actions = ['pull', 'push']): string[] {
  const [scope] = decide(rules, { ...request, scopes: [repo(name, ...actions)] });
  return scope?.actions ?? [];
}

describe('the first matching rule decides each resource, later rules are not consulted', () => {
  const rules: AclRule[] = [
    { match: { name: 'team/*' }, actions: ['pull'] },
    { match: { name: 'team/*' }, actions: ['*'] },
  ];
  test('a later, wider rule does not add to an earlier match', () => {
    expect(granted(rules, 'team/app')).toEqual(['pull']);
  });
  test('each requested resource is decided separately', () => {
    const result = decide(
      [{ match: { name: 'a/*' }, actions: ['pull'] }, { match: { name: 'b/*' }, actions: ['push'] }],
      { scopes: [repo('a/x', 'pull', 'push'), repo('b/x', 'pull', 'push'), repo('c/x', 'pull')] },
    );
    expect(result).toEqual([repo('a/x', 'pull'), repo('b/x', 'push')]);
  });
});

describe('rule order matters (docker_auth #237)', () => {
  const deny: AclRule = { match: { name: 'secret/*' }, actions: [] };
  const allowAll: AclRule = { match: { account: '/.+/' }, actions: ['*'] };
  test('a deny before an allow-all protects the resource', () => {
    expect(granted([deny, allowAll], 'secret/keys')).toEqual([]);
  });
  test('the same rules the other way round grant it', () => {
    expect(granted([allowAll, deny], 'secret/keys')).toEqual(['pull', 'push']);
  });
});

describe('actions ["*"] grants every requested action and nothing more', () => {
  const rules: AclRule[] = [{ match: {}, actions: ['*'] }];
  test('all requested actions are granted', () => {
    expect(granted(rules, 'a/b', {}, ['pull', 'push', 'delete'])).toEqual(['pull', 'push', 'delete']);
  });
  test('only requested actions are granted', () => {
    expect(granted(rules, 'a/b', {}, ['pull'])).toEqual(['pull']);
  });
  test('a requested * (registry:catalog:*) is granted as *', () => {
    expect(decide(rules, { scopes: [{ type: 'registry', name: 'catalog', actions: ['*'] }] })).toEqual([
      { type: 'registry', name: 'catalog', actions: ['*'] },
    ]);
  });
  test('the resource class of the request is kept in the grant', () => {
    expect(decide(rules, { scopes: [{ type: 'repository', class: 'plugin', name: 'a/b', actions: ['pull'] }] })).toEqual([
      { type: 'repository', class: 'plugin', name: 'a/b', actions: ['pull'] },
    ]);
  });
});

describe('a listed set of actions grants the intersection with the requested actions', () => {
  const rules: AclRule[] = [{ match: {}, actions: ['pull', 'delete'] }];
  test('only actions both requested and listed are granted, in the requested order', () => {
    expect(granted(rules, 'a/b', {}, ['push', 'delete', 'pull'])).toEqual(['delete', 'pull']);
  });
  test('an empty intersection leaves the resource out of the grant', () => {
    expect(decide(rules, { scopes: [repo('a/b', 'push')] })).toEqual([]);
  });
  test('a requested * is not granted by a rule that lists actions', () => {
    expect(decide(rules, { scopes: [{ type: 'registry', name: 'catalog', actions: ['*'] }] })).toEqual([]);
  });
  test('a resource requested with no actions is left out', () => {
    expect(decide([{ match: {}, actions: ['*'] }], { scopes: [repo('a/b')] })).toEqual([]);
  });
});

describe('actions [] is an explicit deny that stops evaluation', () => {
  test('a later matching rule is not consulted', () => {
    const rules: AclRule[] = [
      { match: { account: 'mallory' }, actions: [] },
      { match: {}, actions: ['*'] },
    ];
    expect(granted(rules, 'a/b', { account: 'mallory' })).toEqual([]);
    expect(granted(rules, 'a/b', { account: 'alice' })).toEqual(['pull', 'push']);
  });
});

describe('no matching rule means deny (default deny)', () => {
  test('an empty rule list grants nothing', () => {
    expect(decide([], { scopes: [repo('a/b', 'pull')] })).toEqual([]);
  });
  test('a resource matched by no rule is absent from the grant', () => {
    expect(decide([{ match: { name: 'a/*' }, actions: ['*'] }], { scopes: [repo('a/b', 'pull'), repo('z/b', 'pull')] })).toEqual([
      repo('a/b', 'pull'),
    ]);
  });
  test('a rule with an ip condition does not match a request without an ip', () => {
    expect(granted([{ match: { ip: '0.0.0.0/0' }, actions: ['*'] }], 'a/b', {})).toEqual([]);
  });
  test('a rule with a labels condition does not match an identity without that label', () => {
    const rules: AclRule[] = [{ match: { labels: { group: 'admins' } }, actions: ['*'] }];
    expect(granted(rules, 'a/b', {})).toEqual([]);
    expect(granted(rules, 'a/b', { labels: { team: ['admins'] } })).toEqual([]);
    expect(granted(rules, 'a/b', { labels: { group: [] } })).toEqual([]);
  });
});

describe('anonymous requests have account "" and match only rules that allow it', () => {
  const rules: AclRule[] = [
    { match: { account: '', name: 'public/*' }, actions: ['pull'] },
    { match: { account: '/.+/' }, actions: ['*'] },
  ];
  test('an anonymous pull of public/* is granted', () => {
    expect(granted(rules, 'public/x', { account: '' })).toEqual(['pull']);
  });
  test('"/.+/" does not match the anonymous account', () => {
    expect(granted(rules, 'private/x', { account: '' })).toEqual([]);
  });
});

describe('every condition of a match must hold', () => {
  const rules: AclRule[] = [
    { match: { account: 'ci', type: 'repository', name: 'builds/*', service: SERVICE }, actions: ['push'] },
  ];
  test('all conditions holding grants', () => {
    expect(granted(rules, 'builds/x', { account: 'ci' })).toEqual(['push']);
  });
  test.each([
    ['another account', { account: 'dev' }, 'builds/x'],
    ['another service', { account: 'ci', service: 'other.registry' }, 'builds/x'],
    ['another name', { account: 'ci' }, 'other/x'],
  ])('%s denies', (_what, request, name) => {
    expect(granted(rules, name, request)).toEqual([]);
  });
  test('another type denies', () => {
    expect(decide(rules, { account: 'ci', scopes: [{ type: 'registry', name: 'builds/x', actions: ['push'] }] })).toEqual([]);
  });
});

describe('match.labels needs, for each key, one label value matching its pattern', () => {
  const rules: AclRule[] = [{ match: { labels: { group: 'admin*', region: 'eu' } }, actions: ['*'] }];
  test('one matching value per key is enough', () => {
    expect(granted(rules, 'a/b', { labels: { group: ['dev', 'admins'], region: ['eu'] } })).toEqual(['pull', 'push']);
  });
  test('a key without a matching value denies', () => {
    expect(granted(rules, 'a/b', { labels: { group: ['admins'], region: ['us'] } })).toEqual([]);
  });
  test('label keys named like Object.prototype members are not read from the prototype', () => {
    expect(granted([{ match: { labels: { constructor: '/.*/' } }, actions: ['*'] }], 'a/b', { labels: {} })).toEqual([]);
  });
});

describe('onDecision reports the rule that decided each resource', () => {
  test('the matching rule index and comment, or null for default deny', () => {
    const decisions: AclDecision[] = [];
    const authorize = aclAuthorizer(
      [{ match: { name: 'a/*' }, actions: ['pull'], comment: 'read a' }],
      { onDecision: (decision) => decisions.push(decision) },
    );
    authorize({ account: 'alice', service: SERVICE, scopes: [repo('a/x', 'pull', 'push'), repo('b/x', 'pull')] });
    expect(decisions).toEqual([
      { account: 'alice', scope: repo('a/x', 'pull', 'push'), rule: 0, comment: 'read a', granted: ['pull'] },
      { account: 'alice', scope: repo('b/x', 'pull'), rule: null, granted: [] },
    ]);
  });
});

describe('rules are read once at construction', () => {
  test('changing the array afterwards changes nothing', () => {
    const rules: AclRule[] = [{ match: { name: 'a/*' }, actions: ['pull'] }];
    const authorize = aclAuthorizer(rules);
    rules.push({ match: {}, actions: ['*'] });
    (rules[0] as AclRule).actions.push('push');
    expect(authorize({ account: 'alice', service: SERVICE, scopes: [repo('a/x', 'pull', 'push'), repo('b/x', 'pull')] })).toEqual([
      repo('a/x', 'pull'),
    ]);
  });
});

describe('a JSON file holds a rule list or docker_auth\'s { "acl": [...] }', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'dockgate-acl-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const rules: AclRule[] = [{ match: { account: 'alice', name: 'alice/*' }, actions: ['pull'] }];
  const request = { account: 'alice', service: SERVICE, scopes: [repo('alice/x', 'pull', 'push')] };

  test('a top-level array is the rule list', () => {
    const file = join(dir, 'list.json');
    writeFileSync(file, JSON.stringify(rules));
    expect(aclAuthorizer({ file })(request)).toEqual([repo('alice/x', 'pull')]);
  });
  test('an object with "acl" is read as docker_auth\'s ACL section', () => {
    const file = join(dir, 'docker-auth.json');
    writeFileSync(file, JSON.stringify({ acl: rules }));
    expect(aclAuthorizer({ file })(request)).toEqual([repo('alice/x', 'pull')]);
  });
  test('invalid JSON is a TypeError naming the file', () => {
    const file = join(dir, 'broken.json');
    writeFileSync(file, '[{ "match": {} ');
    expect(() => aclAuthorizer({ file })).toThrow(TypeError);
    expect(() => aclAuthorizer({ file })).toThrow(`acl file ${file}: not valid JSON`);
  });
  test('JSON without a rule list is a TypeError', () => {
    const file = join(dir, 'object.json');
    writeFileSync(file, '{"rules": []}');
    expect(() => aclAuthorizer({ file })).toThrow(/must hold an array of rules or \{ "acl": \[ … \] \}/);
  });
  test('a bad rule in the file is reported by index and field', () => {
    const file = join(dir, 'bad-rule.json');
    writeFileSync(file, JSON.stringify([...rules, { match: { name: '[a-' }, actions: ['pull'] }]));
    expect(() => aclAuthorizer({ file })).toThrow('acl rule #1: "match.name" has an unclosed "["');
  });
  test('a missing file fails at construction', () => {
    expect(() => aclAuthorizer({ file: join(dir, 'missing.json') })).toThrow(/ENOENT/);
  });
});

describe('a label matched by match.labels stands, in the rule\'s other patterns, only for the values that matched', () => {
  const teamRule: AclRule[] = [{ match: { labels: { groups: 'team-*' }, name: '${labels:groups}/*' }, actions: ['pull', 'push'] }];
  test('a member of several teams reaches each team\'s namespace', () => {
    const labels = { groups: ['team-red', 'team-blue', 'admins'] };
    expect(granted(teamRule, 'team-red/app', { labels })).toEqual(['pull', 'push']);
    expect(granted(teamRule, 'team-blue/app', { labels })).toEqual(['pull', 'push']);
  });
  test('a group the condition does not admit opens nothing, though the identity has it', () => {
    expect(granted(teamRule, 'admins/app', { labels: { groups: ['team-red', 'admins'] } })).toEqual([]);
  });
  test('a label used without a match.labels condition still stands for all its values', () => {
    const rules: AclRule[] = [{ match: { name: '${labels:groups}/*' }, actions: ['pull'] }];
    expect(granted(rules, 'admins/app', { labels: { groups: ['team-red', 'admins'] } })).toEqual(['pull']);
  });
});
