import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';
import type { LocalContainer } from '../../local/local-container.js';
import { contains, parseSubnet, toInt, toIp } from './network-ipam.js';
import { fixedIpv6 } from './network-fixed6.js';
import { linkEntries, resolveLinks, type NetworkLink } from './network-links.js';
import { ownerOf } from '../../../policy/owner-label.js';
import { objectOf, PREDEFINED, type Member, type NetworkRecord, type NetworkRecords } from './network-records.js';

/** What the sandbox's start needs to know about a container's user networks. */
export interface StartPlan {
  /** Nameservers for its resolv.conf, before slirp's (the gateways of its DNS-serving networks). */
  nameservers: string[];
  /** Every network of the container is `--internal`: it gets no user-mode stack (no way out). */
  internalOnly: boolean;
}

/** Membership as kept on disk beside the records. */
export interface SavedMembership {
  seeded?: string[];
  orphans?: Record<string, Record<string, Member>>;
  links?: Record<string, Record<string, NetworkLink[]>>;
}

/**
 * Which containers are on which networks: the members of each record (from the create body at
 * the first start, or by connect), and the orphans of removed networks. A disconnect is kept:
 * the create body's networks are made members once.
 */
export class NetworkMembership {
  /** Containers whose create body's networks were made members (once: a disconnect is kept). */
  readonly seeded: Set<string>;
  /**
   * container id → network name → its endpoint config, for networks removed while the container
   * was a member: dockerd keeps them in the container's settings by name, so its next start is
   * 404 naming the network until a network of that name exists again, which it then joins.
   */
  readonly orphans: Record<string, Record<string, Member>>;
  /** container id → network name → the legacy links of its create body, resolved at create (become its member's at the first start). */
  readonly links: Record<string, Record<string, NetworkLink[]>>;

  /** @param save keeps the records and this membership on disk */
  constructor(private readonly records: NetworkRecords, saved: SavedMembership, private readonly save: () => void) {
    this.seeded = new Set(saved.seeded ?? []);
    this.orphans = saved.orphans ?? {};
    this.links = saved.links ?? {};
  }

  /** What is kept on disk. */
  saved(): Required<SavedMembership> {
    return { seeded: [...this.seeded], orphans: this.orphans, links: this.links };
  }

  /**
   * Create-time checks of a spec's user networks (endpoint configs are honored). A network that
   * does not exist yet is dockerd's 404 at the start, not at create (docker-compose creates a
   * service's container before `up` makes its network).
   */
  validate(spec: ContainerSpec): void {
    if (spec.host.networkMode.startsWith('container:') && Object.keys(spec.networks).length > 0) {
      throw EngineError.invalidParameter('conflicting options: container type network can\'t be used with multiple networks');
    }
    const nets = wantedNetworks(spec).flatMap(([name, config]) => {
      const net = this.records.find(name);
      if (net) endpointConfig(config, net, `NetworkingConfig.EndpointsConfig "${name}"`);
      return net ? [net] : [];
    });
    linkEntries(spec.host.links, 'HostConfig.Links');
    // On the default bridge, links are dockerd's legacy ones (/etc/hosts and environment, bridge-links.ts);
    // with host, none or another container's namespace, dockerd's conflict.
    const onBridge = this.records.bridge !== undefined && onDefaultBridgeMode(spec.host.networkMode);
    const predefinedLinks = Object.entries(spec.networks).some(([name, config]) => isPredefinedMode(name) && !(onBridge && isBridgeName(name)) && linkEntries(objectOf(config, name).Links, name).length > 0);
    if ((spec.host.links.length > 0 && !isUserMode(spec) && !onBridge) || predefinedLinks) {
      throw EngineError.invalidParameter(`conflicting options: ${spec.host.networkMode || 'this'} type networking can't be used with links. This would result in undefined behavior`);
    }
    if (isUserMode(spec) && nets.every((n) => n.internal) && Object.keys(spec.host.portBindings).length > 0) {
      throw EngineError.invalidParameter('HostConfig.PortBindings: ports cannot be published from a container on internal networks only (it has no way out)');
    }
  }

  /**
   * A created container's legacy links, each resolved to the id it names now (once: `resolve`
   * throws for none): its EndpointsConfig's, and `HostConfig.Links` on its NetworkMode's network
   * (the Docker CLI sends `--link` in both). Kept until its first start makes them its member's.
   */
  created(id: string, spec: ContainerSpec, resolve: (ref: string) => string): void {
    const found: Record<string, NetworkLink[]> = {};
    for (const [name, config] of wantedNetworks(spec)) {
      const given = (objectOf(config, `NetworkingConfig.EndpointsConfig "${name}"`) as { Links?: unknown }).Links;
      const links = resolveLinks(given, `NetworkingConfig.EndpointsConfig "${name}"`, resolve, true);
      // The Docker CLI sends `--link` in both: an alias given twice is one link.
      const host = name === spec.host.networkMode ? resolveLinks(spec.host.links, 'HostConfig.Links', resolve, true) : [];
      links.push(...host.filter((h) => !links.some((l) => l.alias.toLowerCase() === h.alias.toLowerCase())));
      if (links.length > 0) found[name] = links;
    }
    if (this.records.bridge && onDefaultBridgeMode(spec.host.networkMode)) {
      const links = resolveLinks(spec.host.links, 'HostConfig.Links', resolve);
      for (const [name, config] of Object.entries(spec.networks).filter(([n]) => isBridgeName(n))) {
        const given = resolveLinks(objectOf(config, `NetworkingConfig.EndpointsConfig "${name}"`).Links, `NetworkingConfig.EndpointsConfig "${name}"`, resolve);
        links.push(...given.filter((g) => !links.some((l) => l.alias.toLowerCase() === g.alias.toLowerCase())));
      }
      if (links.length > 0) found.bridge = links;
    }
    if (Object.keys(found).length === 0) return;
    this.links[id] = found;
    this.save();
  }

  /** `docker rm --link`: its default-bridge link of that alias goes, from its create-time links and its member's. */
  unlink(id: string, alias: string): void {
    const bridge = this.records.bridge;
    const without = (links: NetworkLink[] | undefined) => links?.filter((l) => l.alias !== alias);
    if (this.links[id]?.bridge) this.links[id].bridge = without(this.links[id].bridge)!;
    const member = bridge?.members[id];
    if (bridge && member?.links) bridge.members[id] = { ...member, links: without(member.links)! };
    this.save();
  }

  /** `docker network connect`: the container becomes a member (not yet saved); its links resolved now, once. */
  join(net: NetworkRecord, container: LocalContainer, endpoint: unknown, resolve: (ref: string) => string): void {
    if (!ownsNamespace(container.spec)) {
      throw EngineError.invalidParameter('container sharing network namespace with another container or host cannot be connected to any other network');
    }
    if (net.members[container.id]) throw EngineError.fromStatus(403, `endpoint with name ${container.name} already exists in network ${net.name}`);
    const member = endpointConfig(endpoint, net, `network ${net.name}`);
    const links = resolveLinks(objectOf(endpoint, `network ${net.name}`).Links, `network ${net.name}: EndpointConfig`, resolve, !isBridgeName(net.name));
    net.members[container.id] = links.length > 0 ? { ...member, links } : member;
  }

  /**
   * `docker network disconnect`: the container is no member any more, and its create body's
   * networks are not made members again. A container not started yet is on its create body's
   * networks already (dockerd's, and docker-compose's create, disconnect, connect with aliases):
   * they are made members first. Not being on the network is an error, forced or not (dockerd's
   * force only reaches endpoints whose container is gone, which a removal here takes along).
   */
  leave(net: NetworkRecord, container: { id: string; spec: ContainerSpec }, _force: boolean): void {
    const id = container.id;
    if (!this.seeded.has(id)) this.seed(id, container.spec);
    if (!net.members[id]) throw EngineError.invalidParameter(`container ${id} is not connected to network ${net.name}`);
    delete net.members[id];
    this.save();
  }

  /**
   * The create body's networks become the container's memberships (once): those that exist as
   * members, the others (removed since the create) kept by name as a removed network's are.
   */
  private seed(id: string, spec: ContainerSpec): void {
    for (const [name, config] of wantedNetworks(spec)) {
      const net = this.records.find(name);
      if (net) {
        net.members[id] ??= this.withLinks(id, name, endpointConfig(config, net, `NetworkingConfig.EndpointsConfig "${name}"`));
      } else {
        const given = objectOf(config, 'EndpointConfig') as { Aliases?: unknown; IPAMConfig?: { IPv4Address?: unknown; IPv6Address?: unknown } | null };
        const ipv4 = given.IPAMConfig?.IPv4Address;
        const ipv6 = given.IPAMConfig?.IPv6Address;
        (this.orphans[id] ??= {})[name] = {
          aliases: Array.isArray(given.Aliases) ? given.Aliases.filter((a): a is string => typeof a === 'string') : [],
          ...(typeof ipv4 === 'string' && ipv4 !== '' ? { ipv4 } : {}),
          ...(typeof ipv6 === 'string' && ipv6 !== '' ? { ipv6 } : {}),
          ...(this.links[id]?.[name] ? { links: this.links[id][name] } : {}),
        };
      }
    }
    this.seeded.add(id);
  }

  /** The member with the create body's links on that network, when it has some. */
  private withLinks(id: string, name: string, member: Member): Member {
    const links = this.links[id]?.[name];
    return links ? { ...member, links } : member;
  }

  /**
   * A network is removed: its members join again at their next start, once a network of that
   * name exists again (until then the start answers 404 naming it, as dockerd's): from their
   * create body, or as they were connected (kept by name, as dockerd keeps them in the
   * container's settings). Not saved: the caller saves with the record gone.
   */
  orphan(net: NetworkRecord): void {
    for (const [id, member] of Object.entries(net.members)) {
      this.seeded.delete(id);
      (this.orphans[id] ??= {})[net.name] = { aliases: member.aliases, ...(member.ipv4 ? { ipv4: member.ipv4 } : {}), ...(member.ipv6 ? { ipv6: member.ipv6 } : {}), ...(member.mac ? { mac: member.mac } : {}), ...(member.links ? { links: member.links } : {}) };
    }
  }

  /** Before the launch: makes the body's networks members at its first start, and says what the container gets. */
  prepareStart(id: string, spec: ContainerSpec): StartPlan {
    const mode = spec.host.networkMode;
    // Networks joined by name here (made after the create, or again after a removal) must be the
    // container owner's: another tenant's network of that name is one that does not exist.
    const owner = ownerOf(spec.labels);
    const resolve = (name: string) => {
      const net = this.records.resolve(name);
      if (owner !== undefined && ownerOf(net.labels) !== owner) throw EngineError.notFound(`network ${name} not found`);
      return net;
    };
    if (!isPredefinedMode(mode)) resolve(mode);
    const lost = this.orphans[id];
    if (lost) {
      // Every removed network it was on must exist again (by name) before anything changes.
      const found = Object.entries(lost).map(([name, member]) => [resolve(name), member] as const);
      for (const [net, member] of found) {
        const back = endpointConfig({ Aliases: member.aliases, IPAMConfig: { IPv4Address: member.ipv4, IPv6Address: member.ipv6 }, MacAddress: member.mac }, net, `network ${net.name}`);
        net.members[id] ??= member.links ? { ...back, links: member.links } : back;
      }
      delete this.orphans[id];
      this.save();
    }
    if (!this.seeded.has(id)) {
      for (const [name, config] of wantedNetworks(spec)) {
        const net = resolve(name);
        net.members[id] ??= this.withLinks(id, name, endpointConfig(config, net, `NetworkingConfig.EndpointsConfig "${name}"`));
      }
      this.seeded.add(id);
      this.save();
    }
    if (this.records.bridge && onDefaultBridgeMode(mode)) this.records.bridge.members[id] ??= this.withLinks(id, 'bridge', { aliases: [] });
    const mine = this.records.user.filter((n) => n.members[id]);
    return {
      nameservers: mine.map((n) => n.gateway),
      internalOnly: mine.length > 0 && mine.every((n) => n.internal) && isUserMode(spec),
    };
  }

  /** A removed container leaves every network. */
  forget(id: string): void {
    let changed = this.seeded.delete(id);
    if (this.links[id]) {
      delete this.links[id];
      changed = true;
    }
    if (this.orphans[id]) {
      delete this.orphans[id];
      changed = true;
    }
    if (this.records.bridge) delete this.records.bridge.members[id];
    for (const net of this.records.user) {
      if (net.members[id]) {
        delete net.members[id];
        changed = true;
      }
    }
    if (changed) this.save();
  }

  /** Only the containers of `ids` stay members (the others were removed while no server ran). */
  keepOnly(ids: ReadonlySet<string>): void {
    let changed = false;
    for (const id of [...this.seeded]) if (!ids.has(id)) changed = this.seeded.delete(id) || changed;
    for (const kept of [this.orphans, this.links]) {
      for (const id of Object.keys(kept)) {
        if (!ids.has(id)) {
          delete kept[id];
          changed = true;
        }
      }
    }
    for (const net of this.records.user) {
      for (const id of Object.keys(net.members)) {
        if (!ids.has(id)) {
          delete net.members[id];
          changed = true;
        }
      }
    }
    if (changed) this.save();
  }
}

/** The user networks a spec names (its NetworkMode and NetworkingConfig), with their endpoint configs as given. */
export function wantedNetworks(spec: ContainerSpec): [string, unknown][] {
  const out = new Map<string, unknown>();
  const mode = spec.host.networkMode;
  if (!isPredefinedMode(mode)) out.set(mode, undefined);
  for (const [name, config] of Object.entries(spec.networks)) {
    if (isPredefinedMode(name)) {
      if (name === mode || ((mode === '' || mode === 'default') && name === 'bridge')) continue;
      throw EngineError.invalidParameter(`NetworkingConfig.EndpointsConfig "${name}": a container joins one predefined network, its NetworkMode`);
    }
    out.set(name, config);
  }
  return [...out];
}

/** Whether the container names a user network (and so joins no predefined one). */
export function isUserMode(spec: ContainerSpec): boolean {
  return !isPredefinedMode(spec.host.networkMode);
}

/** An EndpointsConfig key naming the default bridge. */
function isBridgeName(name: string): boolean {
  return name === 'bridge' || name === 'default';
}

/** NetworkMode unset, `default` or `bridge`. */
function onDefaultBridgeMode(mode: unknown): boolean {
  return mode === undefined || mode === null || mode === '' || mode === 'default' || mode === 'bridge';
}

/** The predefined network a NetworkMode puts the container in (`default` is the bridge when there is one), or undefined (a user network, another container's namespace). */
export function predefinedNetworkOf(mode: unknown, hasBridge: boolean): string | undefined {
  if (onDefaultBridgeMode(mode)) return mode === 'bridge' || hasBridge ? 'bridge' : 'host';
  return mode === 'none' || mode === 'host' ? mode : undefined;
}

/** NetworkMode values that name no user network. */
function isPredefinedMode(mode: string): boolean {
  return mode === '' || PREDEFINED.includes(mode) || mode.startsWith('container:');
}

/** Whether the container has a network namespace of its own (not host, none or another container's). */
function ownsNamespace(spec: ContainerSpec): boolean {
  const mode = spec.host.networkMode;
  return !(mode === 'host' || mode === 'none' || mode.startsWith('container:'));
}

/** An endpoint config honored as far as it goes: Aliases, MacAddress and IPAMConfig.IPv4Address and IPv6Address; other set fields refused by name. */
function endpointConfig(value: unknown, net: NetworkRecord, where: string): Member {
  const config = objectOf(value, where);
  const aliases = config.Aliases === undefined || config.Aliases === null ? [] : config.Aliases;
  if (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string')) throw EngineError.invalidParameter(`${where}: Aliases must be an array of strings`);
  linkEntries(config.Links, where);
  for (const field of ['IPv6Gateway', 'GlobalIPv6Address', 'DriverOpts']) {
    const v = config[field];
    if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && Object.keys(v).length === 0)) {
      throw EngineError.invalidParameter(`${where}: ${field} is not supported by the sandbox runtime`);
    }
  }
  const ipam = objectOf(config.IPAMConfig, `${where} IPAMConfig`);
  if (Array.isArray(ipam.LinkLocalIPs) && ipam.LinkLocalIPs.length > 0) throw EngineError.invalidParameter(`${where}: IPAMConfig.LinkLocalIPs is not supported by the sandbox runtime`);
  const more = { ...macAddress(config.MacAddress, where), ...fixedIpv6(ipam.IPv6Address, net, where) };
  const ipv4 = ipam.IPv4Address;
  if (ipv4 === undefined || ipv4 === null || ipv4 === '') return { aliases: aliases as string[], ...more };
  if (typeof ipv4 !== 'string') throw EngineError.invalidParameter(`${where}: IPAMConfig.IPv4Address must be a string`);
  if (!net.userSubnet) throw EngineError.invalidParameter('user specified IP address is supported only when connecting to networks with user configured subnets');
  const ip = parseSubnet(`${ipv4}/32`, `IPv4 address ${ipv4}`).base;
  const subnet = parseSubnet(net.subnet, 'subnet');
  if (!contains(subnet, ip) || ip === subnet.base || ip === toInt(net.gateway)) throw EngineError.invalidParameter(`Invalid address ${ipv4}: It does not belong to any of this network's subnets`);
  if (net.reserved?.includes(toIp(ip))) throw EngineError.conflict(`Address already in use: ${ipv4} is an auxiliary address of network ${net.name}`);
  return { aliases: aliases as string[], ipv4, ...more };
}

/** EndpointConfig.MacAddress: a unicast MAC (the interface gets it), kept lower case; unset or empty is none. */
function macAddress(value: unknown, where: string): { mac?: string } {
  if (value === undefined || value === null || value === '') return {};
  if (typeof value !== 'string' || !/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(value)) throw EngineError.invalidParameter(`${where}: invalid MacAddress ${JSON.stringify(value)}`);
  if (parseInt(value.slice(0, 2), 16) % 2 === 1) throw EngineError.invalidParameter(`${where}: MacAddress ${value} is a multicast address`);
  return { mac: value.toLowerCase() };
}
