import { describe, expect, test } from '@jest/globals';
import { aclAuthorizer } from '../../../lib/token/authz/index.js';

function ipMatches(rangeSpec: string, ip: string | undefined): boolean {
  const authorize = aclAuthorizer([{ match: { ip: rangeSpec }, actions: ['*'] }]);
  const request = { account: 'alice', service: 's', scopes: [{ type: 'repository', name: 'a/b', actions: ['pull'] }] };
  const result = authorize(ip === undefined ? request : { ...request, ip });
  return Array.isArray(result) && result.length === 1;
}

describe('match.ip is an IPv4 address or CIDR block', () => {
  test.each([
    ['10.0.0.0/8', '10.20.30.40', true],
    ['10.0.0.0/8', '11.0.0.1', false],
    ['192.168.1.7', '192.168.1.7', true],
    ['192.168.1.7', '192.168.1.8', false],
    ['192.168.1.0/24', '192.168.2.1', false],
    ['0.0.0.0/0', '203.0.113.9', true],
    ['10.0.0.0/8', '2001:db8::1', false],
  ])('%s contains %s → %p', (rangeSpec, ip, expected) => {
    expect(ipMatches(rangeSpec, ip)).toBe(expected);
  });
});

describe('match.ip is an IPv6 address or CIDR block', () => {
  test.each([
    ['2001:db8::/32', '2001:db8:1::5', true],
    ['2001:db8::/32', '2001:db9::5', false],
    ['::1', '::1', true],
    ['::1', '0:0:0:0:0:0:0:1', true],
    ['fe80::/10', 'fe80::1%eth0', true],
    ['2001:db8::/32', '10.0.0.1', false],
  ])('%s contains %s → %p', (rangeSpec, ip, expected) => {
    expect(ipMatches(rangeSpec, ip)).toBe(expected);
  });
});

describe('an IPv4-mapped IPv6 client (dual-stack socket) matches IPv4 blocks', () => {
  test.each([
    ['127.0.0.0/8', '::ffff:127.0.0.1', true],
    ['127.0.0.1', '::ffff:127.0.0.1', true],
    ['127.0.0.0/8', '::ffff:7f00:1', true],
    ['10.0.0.0/8', '::ffff:127.0.0.1', false],
    ['::ffff:0:0/96', '127.0.0.1', true],
  ])('%s contains %s → %p', (rangeSpec, ip, expected) => {
    expect(ipMatches(rangeSpec, ip)).toBe(expected);
  });
});

describe('a client address that is absent or not an address matches no ip rule', () => {
  test.each([[undefined], [''], ['localhost'], ['127.0.0.1:5000'], ['999.0.0.1']])('%p', (ip) => {
    expect(ipMatches('0.0.0.0/0', ip)).toBe(false);
    expect(ipMatches('::/0', ip)).toBe(false);
  });
});
