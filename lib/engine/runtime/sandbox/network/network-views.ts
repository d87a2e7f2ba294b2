import type { LocalContainer } from '../../local/local-container.js';
import { networkId as predefinedNetworkId } from '../../local/local-networks.js';
import type { LiveEndpoint, LiveEndpoints } from './network-endpoints.js';
import { parseSubnet } from './network-ipam.js';
import { parseSubnet6 } from './network-ipam6.js';
import { linkEntries, linkTarget } from './network-links.js';
import { predefinedNetworkOf, wantedNetworks, type NetworkMembership } from './network-membership.js';
import type { Member, NetworkRecord, NetworkRecords } from './network-records.js';

/** An endpoint's live values while its container does not run (dockerd's empty strings and zeros). */
const NOT_RUNNING_ENDPOINT = {
  IPAMConfig: null, Links: null, Aliases: null, NetworkID: '', EndpointID: '', Gateway: '', IPAddress: '', IPPrefixLen: 0,
  IPv6Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0, MacAddress: '', DriverOpts: null,
};

/** A network's `GET /networks` entry and inspect body, with its running containers' endpoints. */
export function networkView(net: NetworkRecord, endpoints: LiveEndpoints): Record<string, unknown> {
  const prefixLen = parseSubnet(net.subnet, 'subnet').prefixLen;
  return {
    Name: net.name,
    Id: net.id,
    Created: net.created,
    Scope: 'local',
    Driver: 'bridge',
    EnableIPv6: net.enableIPv6 === true,
    IPAM: { Driver: 'default', Options: null, Config: net.ipamConfig },
    Internal: net.internal,
    Attachable: net.attachable,
    Ingress: false,
    ConfigFrom: { Network: '' },
    ConfigOnly: false,
    Containers: Object.fromEntries([...endpoints.on(net.id)].map(([id, ep]: [string, LiveEndpoint]) => [id, {
      Name: ep.name, EndpointID: ep.endpointId, MacAddress: ep.macAddress, IPv4Address: `${ep.ipAddress}/${prefixLen}`,
      IPv6Address: ep.ipv6Address ? `${ep.ipv6Address}/${prefixLen6(net)}` : '',
    }])),
    Options: net.options ?? {},
    Labels: net.labels,
  };
}

/** A running container's endpoints, as inspect's `NetworkSettings.Networks` shows them. */
export function containerEndpoints(records: NetworkRecords, endpoints: LiveEndpoints, id: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const net of records.all()) {
    const member = net.members[id];
    if (!member) continue;
    const ep = endpoints.on(net.id).get(id);
    const prefixLen = parseSubnet(net.subnet, 'subnet').prefixLen;
    out[net.name] = {
      IPAMConfig: ipamView(member),
      Links: linksView(member),
      // dockerd adds the short id as an alias on user networks (once: not when given), not on the default bridge.
      Aliases: ep && !records.isBridge(net) ? withShortId(member.aliases, ep.shortId) : member.aliases.length > 0 ? member.aliases : null,
      NetworkID: net.id,
      EndpointID: ep?.endpointId ?? '',
      Gateway: ep ? net.gateway : '',
      IPAddress: ep?.ipAddress ?? '',
      IPPrefixLen: ep ? prefixLen : 0,
      IPv6Gateway: ep?.ipv6Address ? net.gateway6 ?? '' : '',
      GlobalIPv6Address: ep?.ipv6Address ?? '',
      GlobalIPv6PrefixLen: ep?.ipv6Address ? prefixLen6(net) : 0,
      MacAddress: ep?.macAddress ?? '',
      DriverOpts: null,
    };
  }
  return out;
}

/**
 * A created or exited container's networks as dockerd 20.10 shows them: before its first start,
 * those of its create body (aliases and address as given, no NetworkID); afterwards and after a
 * connect, its memberships with its short id among the aliases, and the NetworkID once it ran
 * there; a removed network's entry stays, by name. A container in a predefined network mode
 * (the default bridge, `none`, `host`) shows that network, with its NetworkID once it ran; one
 * in another container's namespace shows none. Every live value is empty but a MacAddress that
 * was asked for.
 */
export function stoppedEndpoints(records: NetworkRecords, membership: NetworkMembership, container: Pick<LocalContainer, 'id' | 'spec' | 'startedAt'>): Record<string, Record<string, unknown>> {
  const id = container.id;
  const shortId = id.slice(0, 12);
  const out: Record<string, Record<string, unknown>> = {};
  const show = (name: string, member: Member, networkId: string, withShort: boolean): void => {
    const aliases = withShort ? withShortId(member.aliases, shortId) : member.aliases;
    out[name] = {
      ...NOT_RUNNING_ENDPOINT,
      IPAMConfig: ipamView(member),
      Links: linksView(member),
      Aliases: aliases.length > 0 ? aliases : null,
      NetworkID: networkId,
      // A MacAddress given at create or connect is shown before the start, as dockerd shows its endpoint config's.
      MacAddress: member.mac ?? '',
    };
  };
  if (!membership.seeded.has(id)) {
    for (const [name, config] of wantedNetworks(container.spec)) {
      const member = rawEndpointConfig(config);
      if (member) show(name, member, '', false);
    }
  }
  for (const net of records.all()) {
    const member = net.members[id];
    if (member) show(net.name, member, member.ran ? net.id : '', !records.isBridge(net));
  }
  for (const [name, member] of Object.entries(membership.orphans[id] ?? {})) show(name, member, '', true);
  const predefined = predefinedNetworkOf(container.spec.host.networkMode, records.bridge !== undefined);
  if (predefined && !out[predefined]) out[predefined] = { ...NOT_RUNNING_ENDPOINT, NetworkID: container.startedAt ? predefinedNetworkId(predefined) : '' };
  return out;
}

/**
 * A network's DNS answer: each running member's name, short id and aliases, also as
 * `<name>.<network>`; none on the default bridge, as on dockerd. The asking container (at `from`)
 * is answered from every user network it is on, this one first, as dockerd's resolver answers a
 * container from all of its networks; on each, its own link aliases come first and lead to the
 * linked container only, as dockerd's do.
 */
export function dnsAnswer(records: NetworkRecords, endpoints: LiveEndpoints, net: NetworkRecord, query: string, from = ''): string[] | undefined {
  if (records.isBridge(net)) return undefined;
  const asker = [...endpoints.on(net.id)].find(([, ep]) => ep.ipAddress === from)?.[0];
  const nets = asker === undefined ? [net] : [net, ...records.user.filter((n) => n !== net && endpoints.on(n.id).has(asker))];
  for (const n of nets) {
    const found = answerOn(endpoints, n, query, asker);
    if (found) return found;
  }
  return undefined;
}

/** One network's addresses for a name, for the asking container (its links there first). */
function answerOn(endpoints: LiveEndpoints, net: NetworkRecord, query: string, asker: string | undefined): string[] | undefined {
  const suffix = `.${net.name.toLowerCase()}`;
  const asked = query.endsWith(suffix) ? query.slice(0, -suffix.length) : query;
  const live = endpoints.on(net.id);
  const linked = asker === undefined ? undefined : linkTarget(net.members[asker]?.links, asked);
  const target = linked !== undefined && 'id' in linked ? live.get(linked.id) : undefined;
  if (target) return addressesOf(target);
  // A link made by name answers as that name does on this network.
  const name = linked !== undefined && 'name' in linked ? linked.name : asked;
  const found: string[] = [];
  for (const [id, ep] of live) {
    const names = [ep.name, ep.shortId, ...(net.members[id]?.aliases ?? [])].map((n) => n.toLowerCase());
    if (names.includes(name)) found.push(...addressesOf(ep));
  }
  return found.length > 0 ? found : undefined;
}

/** A leg's addresses, IPv4 then IPv6 (dns-answer.ts picks by the question's type). */
function addressesOf(ep: LiveEndpoint): string[] {
  return ep.ipv6Address ? [ep.ipAddress, ep.ipv6Address] : [ep.ipAddress];
}

/** Aliases with the short id after them, unless one of them is it already (dockerd's updateNetworkConfig). */
function withShortId(aliases: readonly string[], shortId: string): string[] {
  return aliases.includes(shortId) ? [...aliases] : [...aliases, shortId];
}

/** A create body's endpoint config as given (validated at create), for inspect before the first start. */
function rawEndpointConfig(value: unknown): Member | undefined {
  if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value))) return undefined;
  const config = (value ?? {}) as { Aliases?: unknown; IPAMConfig?: { IPv4Address?: unknown; IPv6Address?: unknown } | null };
  const aliases = Array.isArray(config.Aliases) ? config.Aliases.filter((a): a is string => typeof a === 'string') : [];
  const ipv4 = config.IPAMConfig?.IPv4Address;
  const ipv6 = config.IPAMConfig?.IPv6Address;
  const links = linkEntries((config as { Links?: unknown }).Links, '').map(({ entry }) => ({ entry, alias: '', id: '' }));
  return { aliases, ...(typeof ipv4 === 'string' && ipv4 !== '' ? { ipv4 } : {}), ...(typeof ipv6 === 'string' && ipv6 !== '' ? { ipv6 } : {}), ...(links.length > 0 ? { links } : {}) };
}

/** An endpoint's `IPAMConfig` as inspect shows it: the fixed addresses as given, or null for none. */
function ipamView(member: Member): Record<string, string> | null {
  if (!member.ipv4 && !member.ipv6) return null;
  return { ...(member.ipv4 ? { IPv4Address: member.ipv4 } : {}), ...(member.ipv6 ? { IPv6Address: member.ipv6 } : {}) };
}

/** The prefix length of a network's IPv6 subnet. */
function prefixLen6(net: NetworkRecord): number {
  return net.subnet6 ? parseSubnet6(net.subnet6, 'subnet').prefixLen : 0;
}

/** An endpoint's `Links` as inspect shows them: as given (dockerd's), or null for none. */
function linksView(member: Member): string[] | null {
  return member.links && member.links.length > 0 ? member.links.map((l) => l.entry) : null;
}
