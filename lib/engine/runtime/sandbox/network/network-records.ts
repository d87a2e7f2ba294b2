import { EngineError } from '../../../../engine-api/engine-error.js';
import { networkId as predefinedNetworkId } from '../../local/local-networks.js';
import type { NetworkLink } from './network-links.js';

/** Names dockerd reserves for its predefined networks. */
export const PREDEFINED = ['bridge', 'host', 'none', 'default'];

/** One user-defined network as kept on disk. */
export interface NetworkRecord {
  id: string;
  name: string;
  created: string;
  internal: boolean;
  attachable: boolean;
  labels: Record<string, string>;
  /** The bridge driver options given at create (bridge-options.ts), as inspect shows them. */
  options?: Record<string, string>;
  /** IPAM.Config as the client gave it (dockerd reports it so), or the allocated subnet and gateway. */
  ipamConfig: Record<string, unknown>[];
  subnet: string;
  gateway: string;
  ipRange?: string;
  /** IPAM.Config AuxiliaryAddresses: addresses the allocator never hands out (used by hosts outside the network's containers). */
  reserved?: string[];
  /** The subnet was the client's (fixed addresses are allowed only then, as dockerd says). */
  userSubnet: boolean;
  /** EnableIPv6: its containers get an address of {@link subnet6} too. */
  enableIPv6?: boolean;
  /** The client's IPv6 pool (network-ipam6.ts), canonical: subnet, gateway (its first address unless given) and range. */
  subnet6?: string;
  gateway6?: string;
  ipRange6?: string;
  /** The containers connected to it (by create or connect), with their aliases and fixed address. */
  members: Record<string, Member>;
}

/** A container's endpoint config on one network; `ran`: it has been plugged in there (inspect then shows the NetworkID). */
export interface Member {
  aliases: string[];
  ipv4?: string;
  /** IPAMConfig.IPv6Address as given (inspect echoes it so). */
  ipv6?: string;
  /** EndpointConfig.MacAddress: the MAC its interface gets instead of the one made from its address. */
  mac?: string;
  /** Legacy links (network-links.ts): aliases its own DNS queries on this network resolve to the linked containers. */
  links?: NetworkLink[];
  ran?: boolean;
}

/**
 * The sandbox's network records: the user-defined networks (kept on disk by the caller) and, when
 * the runtime has it, the default `bridge` network. Containers with NetworkMode unset, `default`
 * or `bridge` join it (172.17.0.0/16, as dockerd's), reach each other by address, and have no DNS
 * by name there, as on dockerd. It is one network (one record, addresses unique across it),
 * carried by one hub per owner (network-hubs.ts). Kept in memory only: it is made again at each start.
 */
export class NetworkRecords {
  /** The default bridge's record, when the runtime has one. */
  readonly bridge: NetworkRecord | undefined;

  /** @param user the user-defined networks as saved (the array is kept and changed in place) */
  constructor(readonly user: NetworkRecord[], defaultBridge: boolean) {
    this.bridge = defaultBridge ? {
      id: predefinedNetworkId('bridge'), name: 'bridge', created: new Date().toISOString(), internal: false, attachable: false, labels: {},
      ipamConfig: [{ Subnet: '172.17.0.0/16', Gateway: '172.17.0.1' }], subnet: '172.17.0.0/16', gateway: '172.17.0.1', userSubnet: false, members: {},
    } : undefined;
  }

  /** Every network these records serve: the default bridge first, then the user-defined ones. */
  all(): NetworkRecord[] {
    return this.bridge ? [this.bridge, ...this.user] : this.user;
  }

  /** Whether `net` is the default bridge. */
  isBridge(net: NetworkRecord): boolean {
    return net === this.bridge;
  }

  /** The network `ref` names (full id, name, or a unique id prefix), or undefined. */
  find(ref: string): NetworkRecord | undefined {
    const all = this.all();
    return all.find((n) => n.id === ref) ?? all.find((n) => n.name === ref) ??
      (/^[0-9a-f]+$/.test(ref) ? onlyOne(all.filter((n) => n.id.startsWith(ref))) : undefined);
  }

  /** The network `ref` names, or dockerd's 404. */
  resolve(ref: string): NetworkRecord {
    const net = this.find(ref);
    if (!net) throw EngineError.notFound(`network ${ref} not found`);
    return net;
  }

  /** Adds a new user-defined network. */
  add(net: NetworkRecord): void {
    this.user.push(net);
  }

  /** Takes a user-defined network out of the records. */
  delete(net: NetworkRecord): void {
    this.user.splice(this.user.indexOf(net), 1);
  }
}

/** A body field that must be an object when set; unset is empty. */
export function objectOf(value: unknown, field: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw EngineError.invalidParameter(`${field} must be an object`);
  return value as Record<string, unknown>;
}

function onlyOne<T>(items: T[]): T | undefined {
  return items.length === 1 ? items[0] : undefined;
}
