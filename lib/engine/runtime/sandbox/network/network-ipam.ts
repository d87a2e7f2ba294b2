import { isIPv4 } from 'node:net';
import { EngineError } from '../../../../engine-api/engine-error.js';

/** An IPv4 subnet as numbers: its first address and prefix length. */
export interface Subnet {
  base: number;
  prefixLen: number;
}

export const toInt = (ip: string): number => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
export const toIp = (n: number): string => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
const size = (s: Subnet): number => 2 ** (32 - s.prefixLen);
export const subnetText = (s: Subnet): string => `${toIp(s.base)}/${s.prefixLen}`;
export const contains = (s: Subnet, ip: number): boolean => ip >= s.base && ip < s.base + size(s);
export const overlaps = (a: Subnet, b: Subnet): boolean => a.base < b.base + size(b) && b.base < a.base + size(a);

/** `a.b.c.d/n` → its subnet (host bits dropped); dockerd's message for anything else. */
export function parseSubnet(text: string, field: string): Subnet {
  const match = /^(\d+\.\d+\.\d+\.\d+)\/(\d{1,2})$/.exec(text);
  if (!match || !isIPv4(match[1]!) || Number(match[2]) > 32) throw EngineError.invalidParameter(`invalid ${field}: invalid CIDR address: ${text}`);
  const prefixLen = Number(match[2]);
  const ip = toInt(match[1]!);
  return { base: ip - (ip % 2 ** (32 - prefixLen)), prefixLen };
}

/**
 * The subnets dockerd's default address pools hand out to new bridge networks, in its order:
 * 172.17–31.0.0/16, then 192.168.0–240.0/20 (172.17 is the default bridge's).
 */
export function* defaultPools(): Generator<Subnet> {
  for (let b = 18; b <= 31; b++) yield { base: toInt(`172.${b}.0.0`), prefixLen: 16 };
  for (let c = 0; c < 256; c += 16) yield { base: toInt(`192.168.${c}.0`), prefixLen: 20 };
}

/**
 * The lowest free host address of `range` (within `subnet`), skipping the subnet's own address,
 * its broadcast address and those in `used`; dockerd's allocator also starts from the bottom.
 */
export function freeAddress(subnet: Subnet, range: Subnet, used: Set<number>): number | undefined {
  const first = Math.max(subnet.base + 1, range.base);
  const last = Math.min(subnet.base + size(subnet) - 2, range.base + size(range) - 1);
  for (let ip = first; ip <= last; ip++) if (!used.has(ip)) return ip;
  return undefined;
}

/** dockerd's MAC for an address: 02:42 and the four bytes of the IPv4 address. */
export function macFor(ip: string): string {
  return ['02', '42', ...ip.split('.').map((p) => Number(p).toString(16).padStart(2, '0'))].join(':');
}
