import { describe, expect, test } from '@jest/globals';
import type { ResourceScope } from '../../../lib/scope/index.js';
import { aclAuthorizer, ownNamespaceAcl } from '../../../lib/token/authz/index.js';

const authorize = aclAuthorizer(ownNamespaceAcl());

function grantedTo(account: string, name: string, actions = ['pull', 'push']): string[] {
  const result = authorize({ account, service: 'registry.local', scopes: [{ type: 'repository', name, actions }] }) as ResourceScope[];
  return result[0]?.actions ?? [];
}

describe('ownNamespaceAcl: an authenticated user pulls and pushes their own namespace at any depth', () => {
  test.each([['alice/app'], ['alice/a/b'], ['alice/a/b/c']])('alice may pull and push %s', (name) => {
    expect(grantedTo('alice', name)).toEqual(['pull', 'push']);
  });
  test('delete is not granted', () => {
    expect(grantedTo('alice', 'alice/app', ['pull', 'push', 'delete'])).toEqual(['pull', 'push']);
  });
  test('another user\'s namespace is denied', () => {
    expect(grantedTo('alice', 'bob/app')).toEqual([]);
    expect(grantedTo('alice', 'alicex/app')).toEqual([]);
  });
  test('a name holding the account further down is denied', () => {
    expect(grantedTo('alice', 'bob/alice/app')).toEqual([]);
  });
  test('an account with glob characters owns only its literal namespace', () => {
    expect(grantedTo('a*', 'ab/app')).toEqual([]);
  });
  test('an account holding "/" owns nothing, so it cannot reach into another namespace', () => {
    expect(grantedTo('alice/team', 'alice/team/app')).toEqual([]);
  });
});

describe('ownNamespaceAcl: an authenticated user pulls library images but pushes none', () => {
  test('library/busybox is pull-only', () => {
    expect(grantedTo('alice', 'library/busybox')).toEqual(['pull']);
  });
  test('a user named "library" still cannot push to library/', () => {
    expect(grantedTo('library', 'library/busybox')).toEqual(['pull']);
    expect(grantedTo('library', 'library/a/b')).toEqual(['pull']);
  });
});

describe('ownNamespaceAcl: anonymous requests get nothing', () => {
  test.each([['library/busybox'], ['alice/app'], ['app']])('%s', (name) => {
    expect(grantedTo('', name)).toEqual([]);
  });
});

describe('ownNamespaceAcl returns a fresh list each call', () => {
  test('changing one result does not change the next', () => {
    const first = ownNamespaceAcl();
    first.length = 0;
    expect(ownNamespaceAcl()).toHaveLength(2);
  });
});
