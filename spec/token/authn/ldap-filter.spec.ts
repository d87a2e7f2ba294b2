import { describe, expect, test } from '@jest/globals';
import { escapeLdapFilterValue, ldapAuthenticator } from '../../../lib/token/authn/ldap/index.js';
import { ldapFilter } from '../../../lib/token/authn/ldap/ldap-filter.js';
import { firstRdnValue } from '../../../lib/token/authn/ldap/ldap-dn.js';

describe('user names are escaped in search filters (RFC 4515 §3)', () => {
  test('*, (, ), \\ and NUL become \\2a, \\28, \\29, \\5c and \\00', () => {
    expect(escapeLdapFilterValue('*)(uid=*')).toBe('\\2a\\29\\28uid=\\2a');
    expect(escapeLdapFilterValue('a\\b\u0000')).toBe('a\\5cb\\00');
  });
  test('other characters, non-ASCII included, are kept (they are valid in a filter value)', () => {
    expect(escapeLdapFilterValue('jürgen.o\'hara-1')).toBe('jürgen.o\'hara-1');
  });
  test('every ${account} of the template is filled, escaped', () => {
    expect(ldapFilter('(|(uid=${account})(mail=${account}))', { account: 'a*' })).toBe('(|(uid=a\\2a)(mail=a\\2a))');
  });
  test('an injected filter stays one equality value', () => {
    expect(ldapFilter('(&(objectClass=person)(uid=${account}))', { account: 'x)(|(uid=*' })).toBe('(&(objectClass=person)(uid=x\\29\\28|\\28uid=\\2a))');
  });
});

describe('group DNs from memberOf become names: the value of the first RDN (RFC 4514)', () => {
  test.each([
    ['cn=team-a,ou=groups,dc=example,dc=org', 'team-a'],
    ['CN=Domain Users,CN=Users,DC=corp,DC=example', 'Domain Users'],
    ['cn=Smith\\, J,ou=people,dc=ex', 'Smith, J'],
    ['cn=caf\\C3\\A9,dc=ex', 'café'],
  ])('%s → %s', (dn, name) => {
    expect(firstRdnValue(dn)).toBe(name);
  });
  test.each(['not a dn', 'cn=a+uid=b,dc=ex', 'cn=#0403616263,dc=ex', 'cn=,dc=ex'])('%s has no usable name', (dn) => {
    expect(firstRdnValue(dn)).toBeUndefined();
  });
});

describe('ldapAuthenticator options are validated at construction, naming the option', () => {
  const good = { url: 'ldap://127.0.0.1:389', baseDN: 'ou=people,dc=ex' };
  test.each([
    ['a URL of another scheme', { url: 'http://dir' }, '"url" must be'],
    ['a URL with a path', { url: 'ldap://dir/dc=ex' }, 'without a path'],
    ['no baseDN', { baseDN: '' }, '"baseDN" must be a non-empty string'],
    ['bindDN without a password', { bindDN: 'cn=svc' }, '"bindPassword" must be a non-empty string'],
    ['an empty bind password', { bindDN: 'cn=svc', bindPassword: '' }, 'anonymous bind'],
    ['a filter without ${account}', { userFilter: '(uid=alice)' }, '"userFilter" must contain ${account}'],
    ['a filter with an unknown placeholder', { userFilter: '(uid=${user})' }, 'unknown placeholder "${user}"'],
    ['a filter with unbalanced parentheses', { userFilter: '(&(uid=${account})' }, 'unbalanced'],
    ['StartTLS on ldaps://', { url: 'ldaps://dir', tls: { startTLS: true } }, '"tls.startTLS" is for ldap://'],
    ['a bad attribute name', { groupAttribute: 'member of' }, '"groupAttribute" must be an LDAP attribute name'],
    ['a zero timeout', { timeoutMs: 0 }, '"timeoutMs" must be a positive integer'],
    ['a group search without baseDN', { groupSearch: {} }, '"groupSearch.baseDN"'],
  ])('%s', (_name, change, message) => {
    expect(() => ldapAuthenticator({ ...good, ...change } as never)).toThrow(TypeError);
    expect(() => ldapAuthenticator({ ...good, ...change } as never)).toThrow(message);
  });
  test('good options construct without contacting the directory', () => {
    expect(typeof ldapAuthenticator(good)).toBe('function');
  });
});
