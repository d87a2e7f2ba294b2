import { randomBytes } from 'node:crypto';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { NetworkCreateBody } from '../../../../engine-api/network-operations.js';
import { contains, defaultPools, overlaps, parseSubnet, subnetText, toIp, type Subnet } from './network-ipam.js';
import { bridgeOptions } from './bridge-options.js';
import { isV6Pool } from './network-ipam6.js';
import { ipv6Pool } from './network-pool6.js';
import { objectOf, PREDEFINED, type NetworkRecord, type NetworkRecords } from './network-records.js';

/**
 * `docker network create` with the bridge driver: the body checked (every field the sandbox
 * cannot honor refused by name) and the new network's record, its subnet from the client or
 * from dockerd's default pools, never overlapping another network's. The caller adds it.
 */
export function newNetworkRecord(body: NetworkCreateBody, records: NetworkRecords): NetworkRecord {
  const name = body.Name;
  if (typeof name !== 'string' || name === '') throw EngineError.invalidParameter('network name must be a non-empty string');
  // dockerd 20.10 takes any name (`test 01`, `a/b`); control characters are refused (they would end up in messages and logs).
  if (/[\u0000-\u001f\u007f]/.test(name)) throw EngineError.invalidParameter(`invalid network name ${JSON.stringify(name)}: control characters are not allowed`);
  if (PREDEFINED.includes(name)) throw EngineError.fromStatus(403, `${name} is a pre-defined network and cannot be created`);
  const driver = body.Driver ?? 'bridge';
  if (driver !== 'bridge' && driver !== '') throw EngineError.notFound(`plugin "${String(driver)}" not found`);
  for (const field of ['Ingress', 'ConfigOnly'] as const) if (body[field] === true) throw EngineError.invalidParameter(`${field}: not supported by the sandbox runtime`);
  if (typeof body.ConfigFrom === 'object' && body.ConfigFrom !== null && (body.ConfigFrom as { Network?: string }).Network) {
    throw EngineError.invalidParameter('ConfigFrom: not supported by the sandbox runtime');
  }
  if (body.Scope !== undefined && body.Scope !== '' && body.Scope !== 'local') throw EngineError.invalidParameter(`Scope "${String(body.Scope)}": only local networks`);
  const options = bridgeOptions(objectOf(body.Options, 'Options'));
  const labels = objectOf(body.Labels, 'Labels') as Record<string, string>;
  if (records.user.some((n) => n.name === name)) throw EngineError.conflict(`network with name ${name} already exists`);
  const ipam = objectOf(body.IPAM, 'IPAM');
  if (ipam.Driver !== undefined && ipam.Driver !== '' && ipam.Driver !== 'default') throw EngineError.invalidParameter(`IPAM.Driver "${String(ipam.Driver)}": only the default IPAM driver`);
  if (ipam.Options !== undefined && ipam.Options !== null && Object.keys(objectOf(ipam.Options, 'IPAM.Options')).length > 0) {
    throw EngineError.invalidParameter('IPAM.Options: not supported by the sandbox runtime');
  }
  const configs = ipam.Config === undefined || ipam.Config === null ? [] : ipam.Config;
  if (!Array.isArray(configs)) throw EngineError.invalidParameter('IPAM.Config must be an array');
  // One IPv4 and one IPv6 pool at most, in any order (inspect shows the IPv4 one first, as dockerd does).
  const v6Configs = configs.filter((c) => isV6Pool((c as { Subnet?: unknown } | null)?.Subnet));
  const v4Configs = configs.filter((c) => !v6Configs.includes(c));
  if (v4Configs.length > 1 || v6Configs.length > 1) throw EngineError.invalidParameter('IPAM.Config: one IPv4 and one IPv6 subnet per network in the sandbox runtime');
  const v6 = ipv6Pool(v6Configs[0], records.user, body.EnableIPv6 === true);
  const given = objectOf(v4Configs[0], 'IPAM.Config[0]');
  // null is unset, as dockerd reads it (docker-py's IPAMPool sends every field, null when not given).
  for (const key of ['Subnet', 'Gateway', 'IPRange'] as const) {
    if (given[key] !== undefined && given[key] !== null && typeof given[key] !== 'string') throw EngineError.invalidParameter(`IPAM.Config ${key} must be a string`);
  }
  const config = given as { Subnet?: string | null; Gateway?: string | null; IPRange?: string | null; AuxiliaryAddresses?: unknown };
  for (const key of Object.keys(given)) {
    if (!['Subnet', 'Gateway', 'IPRange', 'AuxiliaryAddresses'].includes(key)) throw EngineError.invalidParameter(`IPAM.Config: unknown field ${key}`);
  }
  const auxiliary = objectOf(config.AuxiliaryAddresses, 'IPAM.Config.AuxiliaryAddresses');
  const taken = records.all().map((n) => parseSubnet(n.subnet, 'subnet'));
  let subnet: Subnet;
  if (config.Subnet) {
    subnet = parseSubnet(config.Subnet, `subnet ${config.Subnet}`);
    if (subnet.prefixLen > 30) throw EngineError.invalidParameter(`subnet ${config.Subnet}: too small for containers`);
    if (taken.some((t) => overlaps(t, subnet))) throw EngineError.fromStatus(403, 'Pool overlaps with other one on this address space');
  } else {
    if (config.Gateway || config.IPRange) throw EngineError.invalidParameter('IPAM.Config: Gateway and IPRange need a Subnet');
    const free = [...defaultPools()].find((p) => !taken.some((t) => overlaps(t, p)));
    if (!free) throw EngineError.invalidParameter('could not find an available, non-overlapping IPv4 address pool among the defaults to assign to the network');
    subnet = free;
  }
  let gateway = subnet.base + 1;
  if (config.Gateway) {
    const g = parseSubnet(`${config.Gateway}/32`, `gateway ${config.Gateway}`).base;
    if (!contains(subnet, g)) throw EngineError.invalidParameter(`no matching subnet for gateway ${config.Gateway}`);
    gateway = g;
  }
  let ipRange: string | undefined;
  if (config.IPRange) {
    const range = parseSubnet(config.IPRange, `ip-range ${config.IPRange}`);
    if (!contains(subnet, range.base) || range.prefixLen < subnet.prefixLen) throw EngineError.invalidParameter(`ip-range ${config.IPRange} is not within subnet ${subnetText(subnet)}`);
    ipRange = subnetText(range);
  }
  // Addresses kept for hosts outside the network's containers: in the subnet, never handed out.
  const reserved = Object.entries(auxiliary).map(([key, value]) => {
    const ip = typeof value === 'string' ? parseSubnet(`${value}/32`, `auxiliary address ${key}`).base : NaN;
    if (!contains(subnet, ip)) throw EngineError.invalidParameter(`IPAM.Config.AuxiliaryAddresses ${key}: ${String(value)} is not in subnet ${subnetText(subnet)}`);
    return toIp(ip);
  });
  return {
    id: randomBytes(32).toString('hex'),
    name,
    created: new Date().toISOString(),
    internal: body.Internal === true,
    attachable: body.Attachable === true,
    labels,
    ...(Object.keys(options).length > 0 ? { options } : {}),
    ipamConfig: [
      config.Subnet ? Object.fromEntries(Object.entries(given).filter(([k, v]) => v && (k !== 'AuxiliaryAddresses' || reserved.length > 0))) : { Subnet: subnetText(subnet), Gateway: toIp(gateway) },
      ...(v6 ? [v6.shown] : []),
    ],
    subnet: subnetText(subnet),
    gateway: toIp(gateway),
    ...(ipRange ? { ipRange } : {}),
    ...(reserved.length > 0 ? { reserved } : {}),
    userSubnet: Boolean(config.Subnet),
    ...(body.EnableIPv6 === true ? { enableIPv6: true } : {}),
    ...v6?.record,
    members: {},
  };
}
