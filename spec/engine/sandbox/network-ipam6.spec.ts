/**
 * The IPv6 side of a user network's IPAM (network/network-ipam6.ts): addresses read in every form
 * IPv6 has and printed in the one canonical form dockerd prints (RFC 5952), subnets with their host
 * bits dropped, and the allocator handing out the lowest free address of a range.
 */
import { describe, expect, test } from '@jest/globals';
import { freeAddress6, parseAddress6, parseSubnet6, subnetText6, toBig6, toIp6 } from '../../../lib/engine/runtime/sandbox/network/network-ipam6.js';

describe('IPv6 addresses are read in any form and printed canonically (RFC 5952, as Go prints them)', () => {
  test.each([
    ['2001:389::f00d', '2001:389::f00d'],
    ['2001:0389:0000:0000:0000:0000:0000:F00D', '2001:389::f00d'],
    ['fd00:db8:6:0:0:0:0:1', 'fd00:db8:6::1'],
    ['::', '::'],
    ['::1', '::1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
  ])('%s is %s', (given, canonical) => {
    expect(toIp6(toBig6(given))).toBe(canonical);
  });

  test('a text that is no IPv6 address (an IPv4 one, a zone) is dockerd\'s 400', () => {
    for (const bad of ['10.1.2.3', 'bogus', 'fe80::1%eth0', 'fd00::g']) {
      expect(() => parseAddress6(bad)).toThrow(expect.objectContaining({ status: 400, message: `invalid IPv6 address: ${bad}` }));
    }
  });
});

describe('IPv6 subnets drop their host bits and refuse anything that is not a CIDR', () => {
  test('a subnet is kept canonical, its host bits gone', () => {
    expect(subnetText6(parseSubnet6('2001:389::0/96', 'subnet'))).toBe('2001:389::/96');
    expect(subnetText6(parseSubnet6('fd00:db8:6::77/64', 'subnet'))).toBe('fd00:db8:6::/64');
  });
  test('no prefix, a prefix over 128 or an IPv4 subnet: invalid CIDR address', () => {
    for (const bad of ['fd00::', 'fd00::/129', '10.0.0.0/8']) {
      expect(() => parseSubnet6(bad, `subnet ${bad}`)).toThrow(`invalid subnet ${bad}: invalid CIDR address: ${bad}`);
    }
  });
});

describe('the allocator hands out the lowest free address of the range, never the subnet\'s own', () => {
  const subnet = parseSubnet6('fd00:1::/64', 'subnet');
  test('the subnet\'s first host first, then past the used ones', () => {
    expect(toIp6(freeAddress6(subnet, subnet, new Set())!)).toBe('fd00:1::1');
    expect(toIp6(freeAddress6(subnet, subnet, new Set([toBig6('fd00:1::1'), toBig6('fd00:1::2')]))!)).toBe('fd00:1::3');
  });
  test('inside an IP range, from its start; none when the range is full', () => {
    const range = parseSubnet6('fd00:1::100/126', 'ip-range');
    expect(toIp6(freeAddress6(subnet, range, new Set())!)).toBe('fd00:1::100');
    const used = new Set([0x100n, 0x101n, 0x102n, 0x103n].map((n) => subnet.base + n));
    expect(freeAddress6(subnet, range, used)).toBeUndefined();
  });
});
