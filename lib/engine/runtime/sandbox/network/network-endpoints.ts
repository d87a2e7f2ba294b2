import { randomBytes } from 'node:crypto';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { LocalContainer } from '../../local/local-container.js';
import { address6 } from './network-address6.js';
import { freeAddress, macFor, parseSubnet, toInt, toIp } from './network-ipam.js';
import type { NetworkRecord } from './network-records.js';

/** One running container's leg on a network. */
export interface LiveEndpoint {
  /** The hub it is plugged into: the network's id, or on the default bridge its owner's (see network-hubs.ts). */
  hub: string;
  name: string;
  shortId: string;
  ifname: string;
  ipAddress: string;
  /** Its IPv6 address, on a network with EnableIPv6 (network-address6.ts). */
  ipv6Address?: string;
  macAddress: string;
  endpointId: string;
  pid: number;
}

/** A running container's network namespace, as the launch gate reported it. */
export interface ContainerNamespace {
  pid: number;
  name: string;
  /** It has a way out through the user-mode stack (its resolv.conf then lists slirp's DNS too). */
  egress: boolean;
}

/**
 * The running containers' legs: each one's network namespace, and its endpoint (interface name,
 * address, MAC) on each network it is plugged into. Addresses are handed out here, unique on a
 * network (fixed ones, the gateway and the auxiliary addresses aside). Memory only: nothing of
 * it survives a server.
 */
export class LiveEndpoints {
  /**
   * Running container id → a process inside its network namespace (bwrap's child, as the gate
   * reported it). Not the container's recorded pid: that is its launcher's, still in the
   * server's own namespace, where a veth must never land.
   */
  readonly namespaces = new Map<string, ContainerNamespace>();
  /** network id → container id → its live endpoint. */
  private readonly live = new Map<string, Map<string, LiveEndpoint>>();

  /** The live endpoints on a network, by container id. */
  on(networkId: string): ReadonlyMap<string, LiveEndpoint> {
    return this.live.get(networkId) ?? new Map<string, LiveEndpoint>();
  }

  /** How many running containers are plugged into a network. */
  count(networkId: string): number {
    return this.live.get(networkId)?.size ?? 0;
  }

  /** The pid inside a running container's network namespace, or undefined when it does not run. */
  runningPid(c: LocalContainer): number | undefined {
    return c.status === 'running' ? this.namespaces.get(c.id)?.pid : undefined;
  }

  /**
   * A new leg of a member on a network, reserved before the (slow) plumbing so that two attaches
   * at once cannot take one address: its fixed address or a free one, and the first `ethN` it
   * has on no network yet.
   */
  reserve(net: NetworkRecord, id: string, name: string, pid: number, hub: string): LiveEndpoint {
    const endpoints = this.live.get(net.id) ?? new Map<string, LiveEndpoint>();
    this.live.set(net.id, endpoints);
    const member = net.members[id]!;
    const subnet = parseSubnet(net.subnet, 'subnet');
    const used = new Set<number>([toInt(net.gateway), ...[...endpoints.values()].map((e) => toInt(e.ipAddress))]);
    for (const [other, m] of Object.entries(net.members)) if (other !== id && m.ipv4) used.add(toInt(m.ipv4));
    for (const ip of net.reserved ?? []) used.add(toInt(ip));
    let ip: number | undefined;
    if (member.ipv4) {
      ip = toInt(member.ipv4);
      if (used.has(ip)) throw EngineError.conflict(`Address already in use: ${member.ipv4} on network ${net.name}`);
    } else {
      ip = freeAddress(subnet, net.ipRange ? parseSubnet(net.ipRange, 'ip-range') : subnet, used);
      if (ip === undefined) throw EngineError.system(`no available IPv4 addresses on network ${net.name}`);
    }
    const taken = new Set<string>();
    for (const eps of this.live.values()) {
      const mineHere = eps.get(id);
      if (mineHere) taken.add(mineHere.ifname);
    }
    let n = 1;
    while (taken.has(`eth${n}`)) n++;
    const ipAddress = toIp(ip);
    const macAddress = member.mac ?? macFor(ipAddress);
    if (member.mac && [...endpoints.values()].some((e) => e.macAddress === macAddress)) throw EngineError.conflict(`MAC address ${macAddress} is in use on network ${net.name}`);
    const ipv6Address = address6(net, id, [...endpoints.values()].map((e) => e.ipv6Address));
    const endpoint: LiveEndpoint = {
      hub, name, shortId: id.slice(0, 12), ifname: `eth${n}`, ipAddress, ...(ipv6Address ? { ipv6Address } : {}), macAddress, endpointId: randomBytes(32).toString('hex'), pid,
    };
    endpoints.set(id, endpoint);
    return endpoint;
  }

  /** Takes a container's leg off a network; answers it, or undefined when it had none. */
  release(networkId: string, id: string): LiveEndpoint | undefined {
    const endpoints = this.live.get(networkId);
    const ep = endpoints?.get(id);
    if (!endpoints || !ep) return undefined;
    endpoints.delete(id);
    return ep;
  }

  /** Forgets every leg on a network (its hub ended). */
  clear(networkId: string): void {
    this.live.delete(networkId);
  }
}
