import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { EngineFilters } from '../../../../engine-api/filters.js';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';
import type { NetworkConnectBody, NetworkCreateBody } from '../../../../engine-api/network-operations.js';
import type { LocalContainer, LocalUserNetworks } from '../../local/local-container.js';
import { ownerOf } from '../../../policy/owner-label.js';
import { resolvConf } from './container-network.js';
import type { NetnsTools } from './netns-ip.js';
import { newNetworkRecord } from './network-create.js';
import { LiveEndpoints } from './network-endpoints.js';
import { listFilter, pruneFilter } from './network-filters.js';
import { NetworkHubs } from './network-hubs.js';
import { isUserMode, NetworkMembership, type SavedMembership, type StartPlan } from './network-membership.js';
import { NetworkRecords, PREDEFINED, type NetworkRecord } from './network-records.js';
import { containerEndpoints, dnsAnswer, networkView, stoppedEndpoints } from './network-views.js';

export type { StartPlan } from './network-membership.js';

/**
 * The sandbox's user-defined networks (`docker network create` with the bridge driver) and its
 * default bridge, behind the runtime's {@link LocalUserNetworks}: the records (network-records.ts,
 * network-create.ts), which containers are on which (network-membership.ts), one hub per network
 * while containers run on it (network-hubs.ts) with their live endpoints (network-endpoints.ts),
 * what inspect and each network's DNS show (network-views.ts) and the filters
 * (network-filters.ts). This facade orders them and is the one that touches the disk: the records
 * and memberships kept in one file of the state directory, and the running containers' resolv.conf.
 */
export class SandboxNetworks implements LocalUserNetworks {
  private readonly records: NetworkRecords;
  private readonly membership: NetworkMembership;
  /** A write of the records under way (save()), whether changes wait for the next, and the last write's failure. */
  private saving: Promise<void> | undefined;
  private dirty = false;
  private saveError: Error | undefined;
  /** The running containers' namespaces and legs. */
  private readonly live = new LiveEndpoints();
  private readonly hubs: NetworkHubs;
  /** Names of the predefined networks these records serve (LocalNetworks shows the others). */
  readonly predefined: readonly string[];

  /**
   * @param file where the networks are kept
   * @param resolvFile the host file bound over a container's /etc/resolv.conf, rewritten in place
   *   (the bind follows the inode) when a running container joins or leaves a network, so that it
   *   asks the DNS of the networks it is on now
   * @param defaultBridge the runtime has the default `bridge` network (network-records.ts)
   */
  constructor(private readonly file: string, tools: NetnsTools & { unshare: string }, private readonly resolvFile?: (id: string) => string, defaultBridge = true) {
    let saved: { networks?: NetworkRecord[] } & SavedMembership = {};
    if (existsSync(file)) {
      try {
        saved = JSON.parse(readFileSync(file, 'utf8')) as typeof saved;
      } catch {
        saved = {};
      }
    }
    this.records = new NetworkRecords(saved.networks ?? [], defaultBridge);
    this.membership = new NetworkMembership(this.records, saved, () => this.save());
    this.hubs = new NetworkHubs(tools, this.records, this.live, (net, name, from) => dnsAnswer(this.records, this.live, net, name, from));
    this.predefined = this.records.bridge ? ['bridge'] : [];
  }

  // ---- the routes ----

  async create(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }> {
    const record = newNetworkRecord(body, this.records);
    this.records.add(record);
    this.save();
    return { Id: record.id, Warning: '' };
  }

  async remove(ref: string): Promise<void> {
    if (PREDEFINED.includes(ref)) throw EngineError.fromStatus(403, `${ref} is a pre-defined network and cannot be removed`);
    const net = this.records.resolve(ref);
    if (this.live.count(net.id) > 0) throw EngineError.fromStatus(403, `error while removing network: network ${net.name} id ${net.id} has active endpoints`);
    await this.drop(net);
  }

  async prune(filters: EngineFilters): Promise<{ NetworksDeleted: string[] }> {
    const matches = pruneFilter(filters);
    const deleted: string[] = [];
    for (const net of [...this.records.user]) {
      if (this.live.count(net.id) > 0 || !matches(net)) continue;
      await this.drop(net);
      deleted.push(net.name);
    }
    return { NetworksDeleted: deleted };
  }

  async connect(ref: string, container: LocalContainer, body: NetworkConnectBody, resolve: (ref: string) => string): Promise<void> {
    const net = this.records.resolve(ref);
    this.membership.join(net, container, body.EndpointConfig, resolve);
    this.hubs.owners.set(container.id, ownerOf(container.spec.labels) ?? '');
    const running = this.live.runningPid(container);
    if (running !== undefined) {
      try {
        await this.hubs.attach(net, container.id, container.name, running);
      } catch (error) {
        delete net.members[container.id];
        throw error;
      }
      this.rewriteResolvConf(container.id);
    }
    this.save();
  }

  async disconnect(ref: string, container: LocalContainer, force: boolean): Promise<void> {
    const net = this.records.resolve(ref);
    this.membership.leave(net, container, force);
    await this.hubs.detach(net, container.id);
    this.rewriteResolvConf(container.id);
  }

  list(filters: EngineFilters, _containers: LocalContainer[]): Record<string, unknown>[] {
    const matches = listFilter(filters, { inUse: (n) => this.live.count(n.id) > 0, builtin: (n) => this.records.isBridge(n) });
    return this.records.all().filter(matches).map((n) => networkView(n, this.live));
  }

  inspect(ref: string): Record<string, unknown> | undefined {
    const net = this.records.find(ref);
    return net ? networkView(net, this.live) : undefined;
  }

  endpoints(container: Pick<LocalContainer, 'id'>): Record<string, Record<string, unknown>> {
    return containerEndpoints(this.records, this.live, container.id);
  }

  /** A created or exited container's networks as dockerd 20.10 shows them (network-views.ts). */
  stoppedEndpoints(container: Pick<LocalContainer, 'id' | 'spec' | 'startedAt'>): Record<string, Record<string, unknown>> {
    return stoppedEndpoints(this.records, this.membership, container);
  }

  // ---- the sandbox's start, exit and removal ----

  /** Create-time checks of a body's user networks (they exist; endpoint configs are honored). */
  validate(spec: ContainerSpec): void {
    this.membership.validate(spec);
  }

  /** `docker rm --link` (network-membership.ts). */
  unlinked(id: string, alias: string): void {
    this.membership.unlink(id, alias);
  }

  /** A created container's legacy links, resolved once (network-membership.ts). */
  created(id: string, spec: ContainerSpec, resolve: (ref: string) => string): void {
    this.membership.created(id, spec, resolve);
  }

  /** Whether the container names a user network (and so joins no predefined one). */
  isUserMode(spec: ContainerSpec): boolean {
    return isUserMode(spec);
  }

  /** Before the launch: makes the body's networks members at its first start, and says what the container gets. */
  prepareStart(id: string, spec: ContainerSpec): StartPlan {
    const plan = this.membership.prepareStart(id, spec);
    this.hubs.owners.set(id, ownerOf(spec.labels) ?? '');
    return plan;
  }

  /**
   * Its legacy links on the default bridge (bridge-links.ts), at its start: each linked container's
   * id, name and address there. dockerd's words when one does not run or is not on the bridge.
   */
  bridgeLinks(id: string, name: string): { id: string; alias: string; name: string; ip: string }[] {
    const bridge = this.records.bridge;
    return (bridge?.members[id]?.links ?? []).map((link) => {
      const ref = (link.entry.split(':')[0] ?? '').replace(/^\//, '');
      const live = this.live.namespaces.get(link.id);
      if (!live) throw EngineError.conflict(`Cannot link to a non running container: /${ref} AS /${name}/${link.alias}`);
      const ip = this.live.on(bridge!.id).get(link.id)?.ipAddress;
      if (!ip) throw EngineError.conflict(`Cannot link to /${live.name}, as it does not belong to the default network`);
      return { id: link.id, alias: link.alias, name: live.name, ip };
    });
  }

  /** After the container's namespace exists (bwrap's child `pid`), before its command runs: plugs it into each of its networks. */
  async attachAll(id: string, name: string, pid: number, egress: boolean): Promise<void> {
    this.live.namespaces.set(id, { pid, name, egress });
    const mine = this.records.all().filter((n) => n.members[id]);
    // With a way out through the user-mode stack, addresses of the private 172.16.0.0/12 range
    // where networks are made would leave through the host: other networks' containers are
    // unreachable instead, as on dockerd, where networks are isolated (its own subnets win, being
    // narrower). Added with the first leg, in the same call.
    let extra = egress ? ['route replace unreachable 172.16.0.0/12'] : [];
    for (const net of mine) {
      await this.hubs.attach(net, id, name, pid, extra);
      extra = [];
    }
  }

  /**
   * `--network container:ID`: a pid inside the network namespace of the running container of
   * that full id (resolved once, at create: never a name or prefix looked up again); dockerd's
   * 409 when it does not run (or no longer: it may have stopped since the runtime's check).
   */
  joinTarget(id: string): { id: string; pid: number } {
    const ns = this.live.namespaces.get(id);
    if (!ns) throw EngineError.conflict(`cannot join network of a non running container: ${id}`);
    return { id, pid: ns.pid };
  }

  /** After the container's exit: its endpoints are gone with its namespace; their addresses are free again. */
  async stopped(id: string): Promise<void> {
    this.live.namespaces.delete(id);
    for (const net of this.records.all()) await this.hubs.detach(net, id, false);
  }

  /** A removed container leaves every network. */
  forget(id: string): void {
    this.hubs.owners.delete(id);
    this.membership.forget(id);
  }

  /**
   * At the runtime's start: containers removed while no server ran (a crash) leave their
   * networks. Nothing else survives a server: the namespaces, bridges and veths ended with it.
   */
  keepOnly(ids: ReadonlySet<string>): void {
    this.membership.keepOnly(ids);
  }

  /** Ends every network's namespace (the server closing). */
  async close(): Promise<void> {
    await this.hubs.close();
    await this.settled();
  }

  // ---- internals ----

  /** A network goes: its hub ends, its members become orphans (network-membership.ts). */
  private async drop(net: NetworkRecord): Promise<void> {
    await this.hubs.stop(net.id);
    this.membership.orphan(net);
    this.records.delete(net);
    this.save();
  }

  /** The running container's resolv.conf, for the networks it is on now (a file it has, only). */
  private rewriteResolvConf(id: string): void {
    const ns = this.live.namespaces.get(id);
    const path = this.resolvFile?.(id);
    if (!ns || !path || !existsSync(path)) return;
    const gateways = this.records.user.filter((n) => this.live.on(n.id).has(id)).map((n) => n.gateway);
    try {
      writeFileSync(path, resolvConf(gateways, ns.egress));
    } catch {
      // The container is going away meanwhile: nothing to tell it.
    }
  }

  /**
   * Keeps the records on disk, off the event loop: one write at a time, and changes made while one
   * is under way go in the next, with everything as it is then. A start and a removal each
   * change the membership, and a rename over a file makes ext4 write the new one's data first: done
   * synchronously, 16 concurrent `docker run --rm` waited on 32 of them in turn.
   */
  private save(): void {
    this.dirty = true;
    this.saving ??= this.writeOut();
  }

  private async writeOut(): Promise<void> {
    const temp = `${this.file}.tmp`;
    try {
      while (this.dirty) {
        this.dirty = false;
        await writeFile(temp, JSON.stringify({ networks: this.records.user, ...this.membership.saved() }), { mode: 0o600 });
        await rename(temp, this.file);
      }
      this.saveError = undefined;
    } catch (error) {
      // Kept for settled(); the next change writes everything again.
      this.saveError = error as Error;
    } finally {
      this.saving = undefined;
    }
  }

  /** Resolves once every change so far is on disk; rejects with the last write's error. */
  async settled(): Promise<void> {
    while (this.saving) await this.saving;
    if (this.saveError) throw this.saveError;
  }
}
