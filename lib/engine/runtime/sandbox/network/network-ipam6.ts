import { isIPv6 } from 'node:net';
import { EngineError } from '../../../../engine-api/engine-error.js';

/** An IPv6 subnet as numbers: its first address and prefix length. */
export interface Subnet6 {
  base: bigint;
  prefixLen: number;
}

const size = (s: Subnet6): bigint => 1n << BigInt(128 - s.prefixLen);

/** An IPv6 address (any form Node's isIPv6 takes, an embedded IPv4 tail too) as a 128-bit number. */
export function toBig6(ip: string): bigint {
  let text = ip.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** A 128-bit number as an IPv6 address in its canonical text (RFC 5952, as Go's net.IP prints it). */
export function toIp6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups (the first of equal ones) becomes `::`.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

export const subnetText6 = (s: Subnet6): string => `${toIp6(s.base)}/${s.prefixLen}`;
export const contains6 = (s: Subnet6, ip: bigint): boolean => ip >= s.base && ip < s.base + size(s);
export const overlaps6 = (a: Subnet6, b: Subnet6): boolean => a.base < b.base + size(b) && b.base < a.base + size(a);

/** Whether an IPAM pool's subnet text is an IPv6 one. */
export const isV6Pool = (text: unknown): boolean => typeof text === 'string' && text.includes(':');

/** `addr/n` → its IPv6 subnet (host bits dropped); dockerd's message for anything else. */
export function parseSubnet6(text: string, field: string): Subnet6 {
  const slash = text.lastIndexOf('/');
  const address = text.slice(0, slash);
  const prefix = text.slice(slash + 1);
  if (slash < 0 || !isIPv6(address) || address.includes('%') || !/^\d{1,3}$/.test(prefix) || Number(prefix) > 128) {
    throw EngineError.invalidParameter(`invalid ${field}: invalid CIDR address: ${text}`);
  }
  const prefixLen = Number(prefix);
  const ip = toBig6(address);
  return { base: ip - (ip % size({ base: 0n, prefixLen })), prefixLen };
}

/** An IPv6 address given alone (`IPv6Address`, a gateway): its number, or dockerd's 400 naming it. */
export function parseAddress6(text: string, what = 'IPv6 address'): bigint {
  if (!isIPv6(text) || text.includes('%')) throw EngineError.invalidParameter(`invalid ${what}: ${text}`);
  return toBig6(text);
}

/**
 * The lowest free address of `range` (within `subnet`), skipping the subnet's own address (the
 * subnet-router anycast address) and those in `used`; dockerd's allocator also starts from the
 * bottom. IPv6 has no broadcast address. Looks at most `limit` addresses.
 */
export function freeAddress6(subnet: Subnet6, range: Subnet6, used: ReadonlySet<bigint>, limit = 65536): bigint | undefined {
  const first = subnet.base + 1n > range.base ? subnet.base + 1n : range.base;
  const rangeEnd = range.base + size(range) - 1n;
  const subnetEnd = subnet.base + size(subnet) - 1n;
  const last = rangeEnd < subnetEnd ? rangeEnd : subnetEnd;
  for (let ip = first, n = 0; ip <= last && n < limit; ip++, n++) if (!used.has(ip)) return ip;
  return undefined;
}
