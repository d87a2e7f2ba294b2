import { EngineError } from '../../../../engine-api/engine-error.js';
import { contains6, parseAddress6, parseSubnet6 } from './network-ipam6.js';
import type { NetworkRecord } from './network-records.js';

/**
 * An endpoint's `IPAMConfig.IPv6Address` (docker-py's `ipv6_address`, `docker run --ip6`) on
 * `net`, checked as dockerd checks it: an IPv6 address, on a network with a v6 subnet of the
 * client's, inside it (neither the subnet's own address). Kept as given (inspect echoes it);
 * the container gets it while the network has EnableIPv6. Unset or empty is none.
 */
export function fixedIpv6(value: unknown, net: NetworkRecord, where: string): { ipv6?: string } {
  if (value === undefined || value === null || value === '') return {};
  if (typeof value !== 'string') throw EngineError.invalidParameter(`${where}: IPAMConfig.IPv6Address must be a string`);
  const ip = parseAddress6(value);
  if (!net.subnet6) throw EngineError.invalidParameter('user specified IP address is supported only when connecting to networks with user configured subnets');
  const subnet = parseSubnet6(net.subnet6, 'subnet');
  if (!contains6(subnet, ip) || ip === subnet.base) throw EngineError.invalidParameter(`Invalid address ${value}: It does not belong to any of this network's subnets`);
  return { ipv6: value };
}
