import { EngineError } from '../../../../engine-api/engine-error.js';
import { freeAddress6, parseSubnet6, toBig6, toIp6 } from './network-ipam6.js';
import type { NetworkRecord } from './network-records.js';

/**
 * A new leg's IPv6 address on `net` (canonical), when the network has EnableIPv6 and a v6 subnet:
 * the member's fixed one, or the lowest free one of the range (the gateway, the other members'
 * fixed ones and `live`, the running legs', skipped). dockerd's conflict when a fixed one is taken.
 */
export function address6(net: NetworkRecord, id: string, live: readonly (string | undefined)[]): string | undefined {
  if (!net.enableIPv6 || !net.subnet6 || !net.gateway6) return undefined;
  const used = new Set<bigint>([toBig6(net.gateway6)]);
  for (const ip of live) if (ip) used.add(toBig6(ip));
  for (const [other, m] of Object.entries(net.members)) if (other !== id && m.ipv6) used.add(toBig6(m.ipv6));
  const fixed = net.members[id]?.ipv6;
  if (fixed) {
    const ip = toBig6(fixed);
    if (used.has(ip)) throw EngineError.conflict(`Address already in use: ${fixed} on network ${net.name}`);
    return toIp6(ip);
  }
  const subnet = parseSubnet6(net.subnet6, 'subnet');
  const ip = freeAddress6(subnet, net.ipRange6 ? parseSubnet6(net.ipRange6, 'ip-range') : subnet, used);
  if (ip === undefined) throw EngineError.system(`no available IPv6 addresses on network ${net.name}`);
  return toIp6(ip);
}
