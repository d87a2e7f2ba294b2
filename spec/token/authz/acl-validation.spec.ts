import { describe, expect, test } from '@jest/globals';
import { aclAuthorizer, type AclRule } from '../../../lib/token/authz/index.js';

const good: AclRule = { match: { name: 'library/*' }, actions: ['pull'] };

/** Builds an authorizer whose rule #1 is `bad`, returning the TypeError message. */
function messageFor(bad: unknown): string {
  try {
    aclAuthorizer([good, bad] as AclRule[]);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as TypeError).message;
  }
  throw new Error('expected aclAuthorizer to throw');
}

describe('a bad rule is a TypeError at construction naming the rule index and the field', () => {
  test.each([
    ['not an object', 'allow all', 'acl rule #1: "rule" must be an object with "match" and "actions"'],
    ['an unknown rule field', { ...good, action: ['pull'] }, 'acl rule #1: "action" is not a rule field (match, actions, comment)'],
    ['no match', { actions: ['pull'] }, 'acl rule #1: "match" must be an object (use {} to match every request)'],
    ['match as an array', { match: [], actions: ['pull'] }, 'acl rule #1: "match" must be an object'],
    ['a misspelt match field', { match: { acount: 'bob' }, actions: ['*'] }, 'acl rule #1: "match.acount" is not a match field (account, type, name, service, ip, labels)'],
    ['no actions', { match: {} }, 'acl rule #1: "actions" must be an array: ["*"], a list of actions, or [] to deny'],
    ['actions as a string', { match: {}, actions: '*' }, 'acl rule #1: "actions" must be an array'],
    ['an upper-case action', { match: {}, actions: ['pull', 'Push'] }, 'acl rule #1: "actions[1]" must be "*" or a lower-case action name such as "pull"'],
    ['an empty action', { match: {}, actions: [''] }, 'acl rule #1: "actions[0]" must be "*" or a lower-case action name'],
    ['* with other actions', { match: {}, actions: ['pull', '*'] }, 'acl rule #1: "actions" must be ["*"] alone when it holds "*"'],
    ['a non-string comment', { ...good, comment: 7 }, 'acl rule #1: "comment" must be a string'],
    ['a non-string pattern', { match: { account: 7 }, actions: ['*'] }, 'acl rule #1: "match.account" must be a string pattern'],
    ['an unclosed [', { match: { name: 'app[0-9' }, actions: ['*'] }, 'acl rule #1: "match.name" has an unclosed "["'],
    ['an empty class', { match: { name: 'app[]' }, actions: ['*'] }, 'acl rule #1: "match.name" has an unescaped "]" in a "[…]" class'],
    ['a reversed range', { match: { name: 'app[9-0]' }, actions: ['*'] }, 'acl rule #1: "match.name" has a reversed range "9-0"'],
    ['a trailing backslash', { match: { type: 'repo\\' }, actions: ['*'] }, 'acl rule #1: "match.type" ends with an unfinished "\\" escape'],
    ['a bad regex', { match: { service: '/(unclosed/' }, actions: ['*'] }, 'acl rule #1: "match.service" is not a valid regular expression'],
    ['an unknown variable', { match: { name: '${user}/*' }, actions: ['*'] }, 'acl rule #1: "match.name" uses unknown variable "${user}"'],
    ['an empty label variable', { match: { name: '${labels:}/*' }, actions: ['*'] }, 'acl rule #1: "match.name" uses unknown variable "${labels:}"'],
    ['an unclosed variable', { match: { name: '${account/*' }, actions: ['*'] }, 'acl rule #1: "match.name" has an unclosed "${"'],
    ['a bad ip', { match: { ip: '10.0.0.300' }, actions: ['*'] }, 'acl rule #1: "match.ip" must be an IPv4 or IPv6 address or CIDR block'],
    ['a too long IPv4 prefix', { match: { ip: '10.0.0.0/33' }, actions: ['*'] }, 'acl rule #1: "match.ip" has a prefix length that is not 0–32'],
    ['a too long IPv6 prefix', { match: { ip: '::/129' }, actions: ['*'] }, 'acl rule #1: "match.ip" has a prefix length that is not 0–128'],
    ['a non-numeric prefix', { match: { ip: '10.0.0.0/x' }, actions: ['*'] }, 'acl rule #1: "match.ip" has a prefix length'],
    ['a non-string ip', { match: { ip: ['10.0.0.1'] }, actions: ['*'] }, 'acl rule #1: "match.ip" must be a string address or CIDR block'],
    ['labels not an object', { match: { labels: 'admins' }, actions: ['*'] }, 'acl rule #1: "match.labels" must be an object'],
    ['a bad label pattern', { match: { labels: { group: 'a[' } }, actions: ['*'] }, 'acl rule #1: "match.labels.group" has an unclosed "["'],
  ])('%s', (_what, bad, message) => {
    expect(messageFor(bad)).toContain(message);
  });
  test('the rule index counts from 0, as in the array', () => {
    expect(() => aclAuthorizer([{ match: { name: '[' }, actions: ['*'] }])).toThrow(/^acl rule #0: /);
  });
});

describe('a malformed source or option is a TypeError', () => {
  test.each([[undefined], [null], ['rules.json'], [{ path: 'x' }]])('source %p', (source) => {
    expect(() => aclAuthorizer(source as never)).toThrow(new TypeError('acl rules must be an array of rules or { file: "rules.json" }'));
  });
  test('a non-function onDecision names the option', () => {
    expect(() => aclAuthorizer([], { onDecision: true as never })).toThrow(new TypeError('"onDecision" must be a function'));
  });
});
