import { EngineError } from '../../../../engine-api/engine-error.js';
import { contains6, overlaps6, parseAddress6, parseSubnet6, subnetText6, toIp6 } from './network-ipam6.js';
import { objectOf, type NetworkRecord } from './network-records.js';

/** A new network's IPv6 pool: as inspect shows it (the client's fields), and as the records keep it. */
export interface Pool6 {
  shown: Record<string, unknown>;
  record: Pick<NetworkRecord, 'subnet6' | 'gateway6' | 'ipRange6'>;
}

/**
 * `docker network create --subnet fd00::/64 [--gateway …] [--ip-range …]`: the IPAM config whose
 * Subnet is an IPv6 one, checked as dockerd checks it: a CIDR, no overlap with another network's
 * v6 subnet, the gateway (its first address unless given) and the range inside it. dockerd has no
 * default IPv6 pools: with EnableIPv6 and no v6 subnet, its message. Undefined without a v6 pool.
 */
export function ipv6Pool(value: unknown, others: readonly NetworkRecord[], enable: boolean): Pool6 | undefined {
  if (value === undefined) {
    if (enable) throw EngineError.invalidParameter('could not find an available, non-overlapping IPv6 address pool among the defaults to assign to the network');
    return undefined;
  }
  const given = objectOf(value, 'IPAM.Config');
  for (const key of Object.keys(given)) {
    if (!['Subnet', 'Gateway', 'IPRange', 'AuxiliaryAddresses'].includes(key)) throw EngineError.invalidParameter(`IPAM.Config: unknown field ${key}`);
  }
  for (const key of ['Gateway', 'IPRange'] as const) {
    if (given[key] !== undefined && given[key] !== null && typeof given[key] !== 'string') throw EngineError.invalidParameter(`IPAM.Config ${key} must be a string`);
  }
  if (Object.keys(objectOf(given.AuxiliaryAddresses, 'IPAM.Config.AuxiliaryAddresses')).length > 0) {
    throw EngineError.invalidParameter('IPAM.Config.AuxiliaryAddresses: IPv6 auxiliary addresses are not supported by the sandbox runtime');
  }
  const text = given.Subnet as string;
  const subnet = parseSubnet6(text, `subnet ${text}`);
  if (subnet.prefixLen > 126) throw EngineError.invalidParameter(`subnet ${text}: too small for containers`);
  const taken = others.filter((n) => n.subnet6).map((n) => parseSubnet6(n.subnet6!, 'subnet'));
  if (taken.some((t) => overlaps6(t, subnet))) throw EngineError.fromStatus(403, 'Pool overlaps with other one on this address space');
  let gateway = subnet.base + 1n;
  const gatewayText = given.Gateway as string | null | undefined;
  if (gatewayText) {
    gateway = parseAddress6(gatewayText, 'gateway');
    if (!contains6(subnet, gateway) || gateway === subnet.base) throw EngineError.invalidParameter(`failed to allocate gateway (${gatewayText}): Requested address is out of range`);
  }
  const rangeText = given.IPRange as string | null | undefined;
  let ipRange6: string | undefined;
  if (rangeText) {
    const range = parseSubnet6(rangeText, `ip-range ${rangeText}`);
    if (!contains6(subnet, range.base) || range.prefixLen < subnet.prefixLen) throw EngineError.invalidParameter(`ip-range ${rangeText} is not within subnet ${subnetText6(subnet)}`);
    ipRange6 = subnetText6(range);
  }
  return {
    shown: Object.fromEntries(Object.entries(given).filter(([k, v]) => v && k !== 'AuxiliaryAddresses')),
    record: { subnet6: subnetText6(subnet), gateway6: toIp6(gateway), ...(ipRange6 ? { ipRange6 } : {}) },
  };
}
