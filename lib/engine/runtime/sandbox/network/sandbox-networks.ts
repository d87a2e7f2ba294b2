import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { EngineError } from '../../../../engine-api/engine-error.js';
import { nameFilter } from '../../../../engine-api/name-pattern.js';
import type { EngineFilters } from '../../../../engine-api/filters.js';
import type { ContainerCreateBody } from '../../../../engine-api/runtime-types.js';
import type { NetworkConnectBody, NetworkCreateBody } from '../../../../engine-api/network-operations.js';
import { labelMatches } from '../../local/label-filter.js';
import type { LocalContainer, LocalUserNetworks } from '../../local/local-container.js';
import { parseUntil } from '../../local/until-filter.js';
import { resolvConf } from './container-network.js';
import { networkId as predefinedNetworkId } from '../../local/local-networks.js';
import { NetworkHub } from './network-hub.js';
import { ownerOf } from '../../../policy/owner-label.js';
import { contains, defaultPools, freeAddress, macFor, overlaps, parseSubnet, subnetText, toInt, toIp, type Subnet } from './network-ipam.js';
import type { NetnsTools } from './netns-ip.js';

/** Names dockerd reserves for its predefined networks. */
const PREDEFINED = ['bridge', 'host', 'none', 'default'];

/** One user-defined network as kept on disk. */
interface NetworkRecord {
  id: string;
  name: string;
  created: string;
  internal: boolean;
  attachable: boolean;
  labels: Record<string, string>;
  /** IPAM.Config as the client gave it (dockerd reports it so), or the allocated subnet and gateway. */
  ipamConfig: Record<string, unknown>[];
  subnet: string;
  gateway: string;
  ipRange?: string;
  /** IPAM.Config AuxiliaryAddresses: addresses the allocator never hands out (used by hosts outside the network's containers). */
  reserved?: string[];
  /** The subnet was the client's (fixed addresses are allowed only then, as dockerd says). */
  userSubnet: boolean;
  /** The containers connected to it (by create or connect), with their aliases and fixed address. */
  members: Record<string, Member>;
}

/** A container's endpoint config on one network; `ran`: it has been plugged in there (inspect then shows the NetworkID). */
interface Member {
  aliases: string[];
  ipv4?: string;
  ran?: boolean;
}

/** One running container's leg on a network. */
interface LiveEndpoint {
  /** The hub it is plugged into: the network's id, or on the default bridge its owner's (see hubKey). */
  hub: string;
  name: string;
  shortId: string;
  ifname: string;
  ipAddress: string;
  macAddress: string;
  endpointId: string;
  pid: number;
}

/** What the sandbox's start needs to know about a container's user networks. */
export interface StartPlan {
  /** Nameservers for its resolv.conf, before slirp's (the gateways of its DNS-serving networks). */
  nameservers: string[];
  /** Every network of the container is `--internal`: it gets no user-mode stack (no way out). */
  internalOnly: boolean;
}

/**
 * The sandbox's user-defined networks (`docker network create` with the bridge driver): records
 * kept in one file of the state directory, a {@link NetworkHub} per network while containers run
 * on it, IPAM from dockerd's default pools, and each network's DNS answering its containers'
 * names, short ids and aliases.
 */
export class SandboxNetworks implements LocalUserNetworks {
  private readonly records: NetworkRecord[];
  /** Containers whose create body's networks were made members (once: a disconnect is kept). */
  private readonly seeded: Set<string>;
  /**
   * container id → network name → its endpoint config, for networks removed while the container
   * was a member: dockerd keeps them in the container's settings by name, so its next start is
   * 404 naming the network until a network of that name exists again, which it then joins.
   */
  private readonly orphans: Record<string, Record<string, Member>>;
  /** network id (the default bridge: one per owner, see hubKey) → the hub holding its namespace. */
  private readonly hubs = new Map<string, Promise<NetworkHub>>();
  /** container id → its owner (the owner label, '' for none), recorded when it starts or is connected. */
  private readonly owners = new Map<string, string>();
  /**
   * Running container id → the host pid of a process inside its network namespace (bwrap's
   * child, as the gate reported it). Not the container's recorded pid: that is its launcher's,
   * still in the server's own namespace, where a veth must never land.
   */
  private readonly namespaces = new Map<string, { pid: number; name: string; egress: boolean }>();
  /** network id → container id → its live endpoint. */
  private readonly live = new Map<string, Map<string, LiveEndpoint>>();

  /**
   * @param file where the networks are kept
   * @param resolvFile the host file bound over a container's /etc/resolv.conf, rewritten in place
   *   (the bind follows the inode) when a running container joins or leaves a network, so that it
   *   asks the DNS of the networks it is on now
   */
  /**
   * The default `bridge` network, when the runtime has it: containers with NetworkMode unset,
   * `default` or `bridge` join it (172.17.0.0/16, as dockerd's), reach each other by address, and
   * have no DNS by name there, as on dockerd. It is one network (one record, addresses unique
   * across it) carried by one hub per owner (the containers' owner label): a tenant's containers
   * reach each other there, never another owner's. Kept in memory only: it is made again at each start.
   */
  private readonly bridge: NetworkRecord | undefined;
  /** A bridge hub's namespace outlives its last container for a while: `docker run --rm` one after another would make it each time. */
  private readonly bridgeIdle = new Map<string, NodeJS.Timeout>();
  /** Names of the predefined networks these records serve (LocalNetworks shows the others). */
  readonly predefined: readonly string[];

  constructor(private readonly file: string, private readonly tools: NetnsTools & { unshare: string }, private readonly resolvFile?: (id: string) => string, defaultBridge = true) {
    let saved: { networks?: NetworkRecord[]; seeded?: string[]; orphans?: Record<string, Record<string, Member>> } = {};
    if (existsSync(file)) {
      try {
        saved = JSON.parse(readFileSync(file, 'utf8')) as typeof saved;
      } catch {
        saved = {};
      }
    }
    this.records = saved.networks ?? [];
    this.seeded = new Set(saved.seeded ?? []);
    this.orphans = saved.orphans ?? {};
    this.bridge = defaultBridge ? {
      id: predefinedNetworkId('bridge'), name: 'bridge', created: new Date().toISOString(), internal: false, attachable: false, labels: {},
      ipamConfig: [{ Subnet: '172.17.0.0/16', Gateway: '172.17.0.1' }], subnet: '172.17.0.0/16', gateway: '172.17.0.1', userSubnet: false, members: {},
    } : undefined;
    this.predefined = this.bridge ? ['bridge'] : [];
  }

  // ---- the routes ----

  async create(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }> {
    const name = body.Name;
    if (typeof name !== 'string' || name === '') throw EngineError.invalidParameter('network name must be a non-empty string');
    if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name)) throw EngineError.invalidParameter(`invalid network name "${name}": only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
    if (PREDEFINED.includes(name)) throw EngineError.fromStatus(403, `${name} is a pre-defined network and cannot be created`);
    const driver = body.Driver ?? 'bridge';
    if (driver !== 'bridge' && driver !== '') throw EngineError.notFound(`plugin "${String(driver)}" not found`);
    if (body.EnableIPv6 === true) throw EngineError.invalidParameter('EnableIPv6: IPv6 networks are not supported by the sandbox runtime');
    for (const field of ['Ingress', 'ConfigOnly'] as const) if (body[field] === true) throw EngineError.invalidParameter(`${field}: not supported by the sandbox runtime`);
    if (typeof body.ConfigFrom === 'object' && body.ConfigFrom !== null && (body.ConfigFrom as { Network?: string }).Network) {
      throw EngineError.invalidParameter('ConfigFrom: not supported by the sandbox runtime');
    }
    if (body.Scope !== undefined && body.Scope !== '' && body.Scope !== 'local') throw EngineError.invalidParameter(`Scope "${String(body.Scope)}": only local networks`);
    const options = objectOf(body.Options, 'Options');
    // The bridge driver's options dockerd honors are about the host bridge we never make; each is refused by name.
    const refused = Object.keys(options);
    if (refused.length > 0) throw EngineError.invalidParameter(`Options ${refused.join(', ')}: driver options are not supported by the sandbox runtime`);
    const labels = objectOf(body.Labels, 'Labels') as Record<string, string>;
    if (this.records.some((n) => n.name === name)) throw EngineError.conflict(`network with name ${name} already exists`);
    const ipam = objectOf(body.IPAM, 'IPAM');
    if (ipam.Driver !== undefined && ipam.Driver !== '' && ipam.Driver !== 'default') throw EngineError.invalidParameter(`IPAM.Driver "${String(ipam.Driver)}": only the default IPAM driver`);
    if (ipam.Options !== undefined && ipam.Options !== null && Object.keys(objectOf(ipam.Options, 'IPAM.Options')).length > 0) {
      throw EngineError.invalidParameter('IPAM.Options: not supported by the sandbox runtime');
    }
    const configs = ipam.Config === undefined || ipam.Config === null ? [] : ipam.Config;
    if (!Array.isArray(configs)) throw EngineError.invalidParameter('IPAM.Config must be an array');
    if (configs.length > 1) throw EngineError.invalidParameter('IPAM.Config: one IPv4 subnet per network in the sandbox runtime');
    const given = objectOf(configs[0], 'IPAM.Config[0]');
    for (const key of ['Subnet', 'Gateway', 'IPRange'] as const) {
      if (given[key] !== undefined && typeof given[key] !== 'string') throw EngineError.invalidParameter(`IPAM.Config ${key} must be a string`);
    }
    const config = given as { Subnet?: string; Gateway?: string; IPRange?: string; AuxiliaryAddresses?: unknown };
    for (const key of Object.keys(given)) {
      if (!['Subnet', 'Gateway', 'IPRange', 'AuxiliaryAddresses'].includes(key)) throw EngineError.invalidParameter(`IPAM.Config: unknown field ${key}`);
    }
    const auxiliary = objectOf(config.AuxiliaryAddresses, 'IPAM.Config.AuxiliaryAddresses');
    const taken = this.all().map((n) => parseSubnet(n.subnet, 'subnet'));
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
    const record: NetworkRecord = {
      id: randomBytes(32).toString('hex'),
      name,
      created: new Date().toISOString(),
      internal: body.Internal === true,
      attachable: body.Attachable === true,
      labels,
      ipamConfig: config.Subnet ? [Object.fromEntries(Object.entries(given).filter(([k, v]) => v && (k !== 'AuxiliaryAddresses' || reserved.length > 0)))] : [{ Subnet: subnetText(subnet), Gateway: toIp(gateway) }],
      subnet: subnetText(subnet),
      gateway: toIp(gateway),
      ...(ipRange ? { ipRange } : {}),
      ...(reserved.length > 0 ? { reserved } : {}),
      userSubnet: Boolean(config.Subnet),
      members: {},
    };
    this.records.push(record);
    this.save();
    return { Id: record.id, Warning: '' };
  }

  async remove(ref: string): Promise<void> {
    if (PREDEFINED.includes(ref)) throw EngineError.fromStatus(403, `${ref} is a pre-defined network and cannot be removed`);
    const net = this.resolve(ref);
    if ((this.live.get(net.id)?.size ?? 0) > 0) throw EngineError.fromStatus(403, `error while removing network: network ${net.name} id ${net.id} has active endpoints`);
    await this.drop(net);
  }

  async prune(filters: EngineFilters): Promise<{ NetworksDeleted: string[] }> {
    const until = [...(filters.get('until') ?? [])].map((v) => parseUntil(v));
    const deleted: string[] = [];
    for (const net of [...this.records]) {
      if ((this.live.get(net.id)?.size ?? 0) > 0) continue;
      if (!labelsMatch(net.labels, filters)) continue;
      if (until.some((t) => Date.parse(net.created) >= t)) continue;
      await this.drop(net);
      deleted.push(net.name);
    }
    return { NetworksDeleted: deleted };
  }

  async connect(ref: string, container: LocalContainer, body: NetworkConnectBody): Promise<void> {
    const net = this.resolve(ref);
    if (!ownsNamespace(container.body)) {
      throw EngineError.invalidParameter('container sharing network namespace with another container or host cannot be connected to any other network');
    }
    if (net.members[container.id]) throw EngineError.fromStatus(403, `endpoint with name ${container.name} already exists in network ${net.name}`);
    this.owners.set(container.id, ownerOf(container.body.Labels) ?? '');
    net.members[container.id] = endpointConfig(body.EndpointConfig, net, `network ${net.name}`);
    const running = this.runningPid(container);
    if (running !== undefined) {
      try {
        await this.attach(net, container.id, container.name, running);
      } catch (error) {
        delete net.members[container.id];
        throw error;
      }
      this.rewriteResolvConf(container.id);
    }
    this.save();
  }

  async disconnect(ref: string, container: LocalContainer, force: boolean): Promise<void> {
    const net = this.resolve(ref);
    if (!net.members[container.id] && !force) throw EngineError.invalidParameter(`container ${container.id} is not connected to network ${net.name}`);
    delete net.members[container.id];
    this.seeded.add(container.id);
    this.save();
    await this.detach(net, container.id);
    this.rewriteResolvConf(container.id);
  }

  /** The running container's resolv.conf, for the networks it is on now (a file it has, only). */
  private rewriteResolvConf(id: string): void {
    const ns = this.namespaces.get(id);
    const path = this.resolvFile?.(id);
    if (!ns || !path || !existsSync(path)) return;
    const gateways = this.records.filter((n) => this.live.get(n.id)?.has(id)).map((n) => n.gateway);
    try {
      writeFileSync(path, resolvConf(gateways, ns.egress));
    } catch {
      // The container is going away meanwhile: nothing to tell it.
    }
  }

  list(filters: EngineFilters, containers: LocalContainer[]): Record<string, unknown>[] {
    const named = nameFilter(filters);
    return this.all().filter((n) => named(n.name) && this.matches(n, filters)).map((n) => this.view(n, containers));
  }

  inspect(ref: string): Record<string, unknown> | undefined {
    const net = this.find(ref);
    return net ? this.view(net, []) : undefined;
  }

  endpoints(container: Pick<LocalContainer, 'id'>): Record<string, Record<string, unknown>> {
    const out: Record<string, Record<string, unknown>> = {};
    for (const net of this.all()) {
      const member = net.members[container.id];
      if (!member) continue;
      const ep = this.live.get(net.id)?.get(container.id);
      const prefixLen = parseSubnet(net.subnet, 'subnet').prefixLen;
      out[net.name] = {
        IPAMConfig: member.ipv4 ? { IPv4Address: member.ipv4 } : null,
        Links: null,
        // dockerd adds the short id as an alias on user networks, not on the default bridge.
        Aliases: ep && net !== this.bridge ? [...member.aliases, ep.shortId] : member.aliases.length > 0 ? member.aliases : null,
        NetworkID: net.id,
        EndpointID: ep?.endpointId ?? '',
        Gateway: ep ? net.gateway : '',
        IPAddress: ep?.ipAddress ?? '',
        IPPrefixLen: ep ? prefixLen : 0,
        IPv6Gateway: '',
        GlobalIPv6Address: '',
        GlobalIPv6PrefixLen: 0,
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
   * in another container's namespace shows none. Every live value is empty.
   */
  stoppedEndpoints(container: Pick<LocalContainer, 'id' | 'body' | 'startedAt'>): Record<string, Record<string, unknown>> {
    const id = container.id;
    const shortId = id.slice(0, 12);
    const out: Record<string, Record<string, unknown>> = {};
    const show = (name: string, member: Member, networkId: string, withShortId: boolean): void => {
      const aliases = withShortId ? [...member.aliases, shortId] : member.aliases;
      out[name] = {
        ...NOT_RUNNING_ENDPOINT,
        IPAMConfig: member.ipv4 ? { IPv4Address: member.ipv4 } : null,
        Aliases: aliases.length > 0 ? aliases : null,
        NetworkID: networkId,
      };
    };
    if (!this.seeded.has(id)) {
      for (const [name, config] of this.wanted(container.body)) {
        const member = rawEndpointConfig(config);
        if (member) show(name, member, '', false);
      }
    }
    for (const net of this.all()) {
      const member = net.members[id];
      if (member) show(net.name, member, member.ran ? net.id : '', net !== this.bridge);
    }
    for (const [name, member] of Object.entries(this.orphans[id] ?? {})) show(name, member, '', true);
    const predefined = predefinedNetworkOf(container.body.HostConfig?.NetworkMode, this.bridge !== undefined);
    if (predefined && !out[predefined]) out[predefined] = { ...NOT_RUNNING_ENDPOINT, NetworkID: container.startedAt ? predefinedNetworkId(predefined) : '' };
    return out;
  }

  // ---- the sandbox's start, exit and removal ----

  /** Create-time checks of a body's user networks (they exist; endpoint configs are honored). */
  validate(body: ContainerCreateBody): void {
    const mode = body.HostConfig?.NetworkMode;
    if (typeof mode === 'string' && mode.startsWith('container:') && body.NetworkingConfig && Object.keys(objectOf(objectOf(body.NetworkingConfig, 'NetworkingConfig').EndpointsConfig, 'NetworkingConfig.EndpointsConfig')).length > 0) {
      throw EngineError.invalidParameter('conflicting options: container type network can\'t be used with multiple networks');
    }
    const nets = this.wanted(body).map(([name, config]) => {
      const net = this.resolve(name);
      endpointConfig(config, net, `NetworkingConfig.EndpointsConfig "${name}"`);
      return net;
    });
    const bindings = body.HostConfig?.PortBindings;
    if (this.isUserMode(body) && nets.every((n) => n.internal) && bindings && typeof bindings === 'object' && Object.keys(bindings).length > 0) {
      throw EngineError.invalidParameter('HostConfig.PortBindings: ports cannot be published from a container on internal networks only (it has no way out)');
    }
  }

  /** Whether the container names a user network (and so joins no predefined one). */
  isUserMode(body: ContainerCreateBody): boolean {
    const mode = body.HostConfig?.NetworkMode;
    return typeof mode === 'string' && !isPredefinedMode(mode);
  }

  /** Before the launch: makes the body's networks members at its first start, and says what the container gets. */
  prepareStart(id: string, body: ContainerCreateBody): StartPlan {
    const mode = body.HostConfig?.NetworkMode;
    if (typeof mode === 'string' && !isPredefinedMode(mode)) this.resolve(mode);
    const lost = this.orphans[id];
    if (lost) {
      // Every removed network it was on must exist again (by name) before anything changes.
      const found = Object.entries(lost).map(([name, member]) => [this.resolve(name), member] as const);
      for (const [net, member] of found) {
        net.members[id] ??= endpointConfig({ Aliases: member.aliases, IPAMConfig: member.ipv4 ? { IPv4Address: member.ipv4 } : undefined }, net, `network ${net.name}`);
      }
      delete this.orphans[id];
      this.save();
    }
    if (!this.seeded.has(id)) {
      for (const [name, config] of this.wanted(body)) {
        const net = this.resolve(name);
        net.members[id] ??= endpointConfig(config, net, `NetworkingConfig.EndpointsConfig "${name}"`);
      }
      this.seeded.add(id);
      this.save();
    }
    if (this.bridge && onDefaultBridgeMode(mode)) this.bridge.members[id] ??= { aliases: [] };
    this.owners.set(id, ownerOf(body.Labels) ?? '');
    const mine = this.records.filter((n) => n.members[id]);
    return {
      nameservers: mine.map((n) => n.gateway),
      internalOnly: mine.length > 0 && mine.every((n) => n.internal) && this.isUserMode(body),
    };
  }

  /** After the container's namespace exists (bwrap's child `pid`), before its command runs: plugs it into each of its networks. */
  async attachAll(id: string, name: string, pid: number, egress: boolean): Promise<void> {
    this.namespaces.set(id, { pid, name, egress });
    const mine = this.all().filter((n) => n.members[id]);
    // With a way out through the user-mode stack, addresses of the private 172.16.0.0/12 range
    // where networks are made would leave through the host: other networks' containers are
    // unreachable instead, as on dockerd, where networks are isolated (its own subnets win, being
    // narrower). Added with the first leg, in the same call.
    let extra = egress ? ['route replace unreachable 172.16.0.0/12'] : [];
    for (const net of mine) {
      await this.attach(net, id, name, pid, extra);
      extra = [];
    }
  }

  /**
   * `--network container:ID`: a pid inside the network namespace of the running container of
   * that full id (resolved once, at create: never a name or prefix looked up again); dockerd's
   * 409 when it does not run (or no longer: it may have stopped since the runtime's check).
   */
  joinTarget(id: string): { id: string; pid: number } {
    const ns = this.namespaces.get(id);
    if (!ns) throw EngineError.conflict(`cannot join network of a non running container: ${id}`);
    return { id, pid: ns.pid };
  }

  /** After the container's exit: its endpoints are gone with its namespace; their addresses are free again. */
  async stopped(id: string): Promise<void> {
    this.namespaces.delete(id);
    for (const net of this.all()) await this.detach(net, id, false);
  }

  /** A removed container leaves every network. */
  forget(id: string): void {
    this.owners.delete(id);
    let changed = this.seeded.delete(id);
    if (this.orphans[id]) {
      delete this.orphans[id];
      changed = true;
    }
    if (this.bridge) delete this.bridge.members[id];
    for (const net of this.records) {
      if (net.members[id]) {
        delete net.members[id];
        changed = true;
      }
    }
    if (changed) this.save();
  }

  /**
   * At the runtime's start: containers removed while no server ran (a crash) leave their
   * networks. Nothing else survives a server: the namespaces, bridges and veths ended with it.
   */
  keepOnly(ids: ReadonlySet<string>): void {
    let changed = false;
    for (const id of [...this.seeded]) if (!ids.has(id)) changed = this.seeded.delete(id) || changed;
    for (const id of Object.keys(this.orphans)) {
      if (!ids.has(id)) {
        delete this.orphans[id];
        changed = true;
      }
    }
    for (const net of this.records) {
      for (const id of Object.keys(net.members)) {
        if (!ids.has(id)) {
          delete net.members[id];
          changed = true;
        }
      }
    }
    if (changed) this.save();
  }

  /** Ends every network's namespace (the server closing). */
  async close(): Promise<void> {
    for (const id of [...this.hubs.keys()]) await this.stopHub(id);
  }

  // ---- internals ----

  private wanted(body: ContainerCreateBody): [string, unknown][] {
    const out = new Map<string, unknown>();
    const mode = body.HostConfig?.NetworkMode;
    if (typeof mode === 'string' && !isPredefinedMode(mode)) out.set(mode, undefined);
    const networking = body.NetworkingConfig;
    if (networking !== undefined && networking !== null) {
      const endpoints = objectOf(objectOf(networking, 'NetworkingConfig').EndpointsConfig, 'NetworkingConfig.EndpointsConfig');
      for (const [name, config] of Object.entries(endpoints)) {
        if (isPredefinedMode(name)) {
          if (name === mode || ((mode === undefined || mode === '' || mode === 'default') && name === 'bridge')) continue;
          throw EngineError.invalidParameter(`NetworkingConfig.EndpointsConfig "${name}": a container joins one predefined network, its NetworkMode`);
        }
        out.set(name, config);
      }
    }
    return [...out];
  }

  private runningPid(c: LocalContainer): number | undefined {
    return c.status === 'running' ? this.namespaces.get(c.id)?.pid : undefined;
  }

  private async attach(net: NetworkRecord, id: string, name: string, pid: number, extra: string[] = []): Promise<void> {
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
    const key = this.hubKey(net, id);
    const endpoint: LiveEndpoint = {
      hub: key, name, shortId: id.slice(0, 12), ifname: `eth${n}`, ipAddress, macAddress: macFor(ipAddress), endpointId: randomBytes(32).toString('hex'), pid,
    };
    // Reserved before the (slow) plumbing, so two attaches at once cannot take one address.
    endpoints.set(id, endpoint);
    try {
      const hub = await this.hub(net, key);
      await hub.attach(pid, endpoint, extra);
      member.ran = true;
    } catch (error) {
      endpoints.delete(id);
      if (!this.hubInUse(net, key)) await this.emptied(net, key);
      throw EngineError.system(`cannot connect the container to network ${net.name}: ${(error as Error).message}`, error);
    }
  }

  private async detach(net: NetworkRecord, id: string, unplug = true): Promise<void> {
    const endpoints = this.live.get(net.id);
    const ep = endpoints?.get(id);
    if (!endpoints || !ep) return;
    endpoints.delete(id);
    if (unplug) await (await this.hubs.get(ep.hub))?.detach(ep.pid, ep.ifname).catch(() => undefined);
    if (!this.hubInUse(net, ep.hub)) await this.emptied(net, ep.hub);
  }

  /**
   * The hub a container's leg on a network plugs into: the network's own, and on the default
   * bridge its owner's, so that one owner's containers share a bridge and never see another's
   * (dockerd has one bridge for all; here several tenants share the engine).
   */
  private hubKey(net: NetworkRecord, id: string): string {
    return net === this.bridge ? `${net.id}/${this.owners.get(id) ?? ''}` : net.id;
  }

  /** Whether a running container is still plugged into the hub. */
  private hubInUse(net: NetworkRecord, key: string): boolean {
    return [...(this.live.get(net.id)?.values() ?? [])].some((ep) => ep.hub === key);
  }

  /** A hub without running containers: its namespace ends (a default bridge's after a while). */
  private async emptied(net: NetworkRecord, key: string): Promise<void> {
    if (net !== this.bridge) return this.stopHub(key);
    clearTimeout(this.bridgeIdle.get(key));
    const idle = setTimeout(() => {
      this.bridgeIdle.delete(key);
      if (!this.hubInUse(net, key)) void this.stopHub(key);
    }, BRIDGE_IDLE_MS);
    idle.unref();
    this.bridgeIdle.set(key, idle);
  }

  private hub(net: NetworkRecord, key: string): Promise<NetworkHub> {
    let hub = this.hubs.get(key);
    clearTimeout(this.bridgeIdle.get(key));
    this.bridgeIdle.delete(key);
    if (!hub) {
      const prefixLen = parseSubnet(net.subnet, 'subnet').prefixLen;
      hub = NetworkHub.start(this.tools, net.gateway, prefixLen, (name) => this.lookup(net, name));
      hub.catch(() => this.hubs.delete(key));
      this.hubs.set(key, hub);
    }
    return hub;
  }

  /** Ends a hub's namespace; a user network's (`key` is its id) takes its endpoints along. */
  private async stopHub(key: string): Promise<void> {
    const hub = this.hubs.get(key);
    this.hubs.delete(key);
    this.live.delete(key);
    await (await hub?.catch(() => undefined))?.stop();
  }

  /** The network's names: each running member's name, short id and aliases, also as `<name>.<network>`. */
  private lookup(net: NetworkRecord, query: string): string[] | undefined {
    if (net === this.bridge) return undefined;
    const suffix = `.${net.name.toLowerCase()}`;
    const name = query.endsWith(suffix) ? query.slice(0, -suffix.length) : query;
    const found: string[] = [];
    for (const [id, ep] of this.live.get(net.id) ?? []) {
      const names = [ep.name, ep.shortId, ...(net.members[id]?.aliases ?? [])].map((n) => n.toLowerCase());
      if (names.includes(name)) found.push(ep.ipAddress);
    }
    return found.length > 0 ? found : undefined;
  }

  private async drop(net: NetworkRecord): Promise<void> {
    await this.stopHub(net.id);
    // Its members join again at their next start, once a network of that name exists again (until
    // then the start answers 404 naming it, as dockerd's): from their create body, or as they were
    // connected (kept by name, as dockerd keeps them in the container's settings).
    for (const [id, member] of Object.entries(net.members)) {
      this.seeded.delete(id);
      (this.orphans[id] ??= {})[net.name] = { aliases: member.aliases, ...(member.ipv4 ? { ipv4: member.ipv4 } : {}) };
    }
    this.records.splice(this.records.indexOf(net), 1);
    this.save();
  }

  private find(ref: string): NetworkRecord | undefined {
    const all = this.all();
    return all.find((n) => n.id === ref) ?? all.find((n) => n.name === ref) ??
      (/^[0-9a-f]+$/.test(ref) ? onlyOne(all.filter((n) => n.id.startsWith(ref))) : undefined);
  }

  private resolve(ref: string): NetworkRecord {
    const net = this.find(ref);
    if (!net) throw EngineError.notFound(`network ${ref} not found`);
    return net;
  }

  private view(net: NetworkRecord, _containers: LocalContainer[]): Record<string, unknown> {
    const prefixLen = parseSubnet(net.subnet, 'subnet').prefixLen;
    return {
      Name: net.name,
      Id: net.id,
      Created: net.created,
      Scope: 'local',
      Driver: 'bridge',
      EnableIPv6: false,
      IPAM: { Driver: 'default', Options: {}, Config: net.ipamConfig },
      Internal: net.internal,
      Attachable: net.attachable,
      Ingress: false,
      ConfigFrom: { Network: '' },
      ConfigOnly: false,
      Containers: Object.fromEntries([...(this.live.get(net.id) ?? new Map<string, LiveEndpoint>())].map(([id, ep]) => [id, {
        Name: ep.name, EndpointID: ep.endpointId, MacAddress: ep.macAddress, IPv4Address: `${ep.ipAddress}/${prefixLen}`, IPv6Address: '',
      }])),
      Options: {},
      Labels: net.labels,
    };
  }

  private matches(net: NetworkRecord, filters: EngineFilters): boolean {
    const test = (key: string, ok: (v: string) => boolean): boolean => {
      const values = filters.get(key);
      return !values || values.size === 0 || [...values].some(ok);
    };
    const inUse = (this.live.get(net.id)?.size ?? 0) > 0;
    return test('id', (v) => net.id.startsWith(v)) && test('driver', (v) => v === 'bridge') &&
      test('type', (v) => v === (net === this.bridge ? 'builtin' : 'custom')) && test('scope', (v) => v === 'local') && labelsMatch(net.labels, filters) &&
      // A predefined network is never dangling (dockerd's filterNetworkByUse).
      test('dangling', (v) => ((v === 'true' || v === '1') ? !inUse && net !== this.bridge : inUse || net === this.bridge));
  }

  private all(): NetworkRecord[] {
    return this.bridge ? [this.bridge, ...this.records] : this.records;
  }

  private save(): void {
    const temp = `${this.file}.tmp`;
    writeFileSync(temp, JSON.stringify({ networks: this.records, seeded: [...this.seeded], orphans: this.orphans }), { mode: 0o600 });
    renameSync(temp, this.file);
  }
}

/** An endpoint's live values while its container does not run (dockerd's empty strings and zeros). */
const NOT_RUNNING_ENDPOINT = {
  IPAMConfig: null, Links: null, Aliases: null, NetworkID: '', EndpointID: '', Gateway: '', IPAddress: '', IPPrefixLen: 0,
  IPv6Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0, MacAddress: '', DriverOpts: null,
};

/** A create body's endpoint config as given (validated at create), for inspect before the first start. */
function rawEndpointConfig(value: unknown): Member | undefined {
  if (value !== undefined && value !== null && (typeof value !== 'object' || Array.isArray(value))) return undefined;
  const config = (value ?? {}) as { Aliases?: unknown; IPAMConfig?: { IPv4Address?: unknown } | null };
  const aliases = Array.isArray(config.Aliases) ? config.Aliases.filter((a): a is string => typeof a === 'string') : [];
  const ipv4 = config.IPAMConfig?.IPv4Address;
  return { aliases, ...(typeof ipv4 === 'string' && ipv4 !== '' ? { ipv4 } : {}) };
}

/** How long the default bridge's namespace outlives its last container. */
const BRIDGE_IDLE_MS = 30_000;

/** NetworkMode unset, `default` or `bridge`. */
function onDefaultBridgeMode(mode: unknown): boolean {
  return mode === undefined || mode === null || mode === '' || mode === 'default' || mode === 'bridge';
}

/** The predefined network a NetworkMode puts the container in (`default` is the bridge when there is one), or undefined (a user network, another container's namespace). */
function predefinedNetworkOf(mode: unknown, hasBridge: boolean): string | undefined {
  if (onDefaultBridgeMode(mode)) return mode === 'bridge' || hasBridge ? 'bridge' : 'host';
  return mode === 'none' || mode === 'host' ? mode : undefined;
}

/** NetworkMode values that name no user network. */
function isPredefinedMode(mode: string): boolean {
  return mode === '' || PREDEFINED.includes(mode) || mode.startsWith('container:');
}

/** Whether the container has a network namespace of its own (not host, none or another container's). */
function ownsNamespace(body: ContainerCreateBody): boolean {
  const mode = body.HostConfig?.NetworkMode;
  return !(mode === 'host' || mode === 'none' || (typeof mode === 'string' && mode.startsWith('container:')));
}

/** An endpoint config honored as far as it goes: Aliases and IPAMConfig.IPv4Address; other set fields refused by name. */
function endpointConfig(value: unknown, net: NetworkRecord, where: string): { aliases: string[]; ipv4?: string } {
  const config = objectOf(value, where);
  const aliases = config.Aliases === undefined || config.Aliases === null ? [] : config.Aliases;
  if (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string')) throw EngineError.invalidParameter(`${where}: Aliases must be an array of strings`);
  for (const field of ['Links', 'IPv6Gateway', 'GlobalIPv6Address', 'MacAddress', 'DriverOpts']) {
    const v = config[field];
    if (v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && Object.keys(v).length === 0)) {
      throw EngineError.invalidParameter(`${where}: ${field} is not supported by the sandbox runtime`);
    }
  }
  const ipam = objectOf(config.IPAMConfig, `${where} IPAMConfig`);
  if (ipam.IPv6Address) throw EngineError.invalidParameter(`${where}: IPAMConfig.IPv6Address: IPv6 is not supported by the sandbox runtime`);
  if (Array.isArray(ipam.LinkLocalIPs) && ipam.LinkLocalIPs.length > 0) throw EngineError.invalidParameter(`${where}: IPAMConfig.LinkLocalIPs is not supported by the sandbox runtime`);
  const ipv4 = ipam.IPv4Address;
  if (ipv4 === undefined || ipv4 === null || ipv4 === '') return { aliases: aliases as string[] };
  if (typeof ipv4 !== 'string') throw EngineError.invalidParameter(`${where}: IPAMConfig.IPv4Address must be a string`);
  if (!net.userSubnet) throw EngineError.invalidParameter('user specified IP address is supported only when connecting to networks with user configured subnets');
  const ip = parseSubnet(`${ipv4}/32`, `IPv4 address ${ipv4}`).base;
  const subnet = parseSubnet(net.subnet, 'subnet');
  if (!contains(subnet, ip) || ip === subnet.base || ip === toInt(net.gateway)) throw EngineError.invalidParameter(`Invalid address ${ipv4}: It does not belong to any of this network's subnets`);
  if (net.reserved?.includes(toIp(ip))) throw EngineError.conflict(`Address already in use: ${ipv4} is an auxiliary address of network ${net.name}`);
  return { aliases: aliases as string[], ipv4 };
}

function objectOf(value: unknown, field: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw EngineError.invalidParameter(`${field} must be an object`);
  return value as Record<string, unknown>;
}

function labelsMatch(labels: Record<string, string>, filters: EngineFilters): boolean {
  const values = filters.get('label');
  const without = filters.get('label!');
  return (!values || [...values].every((v) => labelMatches(labels, v))) && (!without || ![...without].some((v) => labelMatches(labels, v)));
}

function onlyOne<T>(items: T[]): T | undefined {
  return items.length === 1 ? items[0] : undefined;
}
