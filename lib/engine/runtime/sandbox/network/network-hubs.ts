import { EngineError } from '../../../../engine-api/engine-error.js';
import type { LiveEndpoints } from './network-endpoints.js';
import { bridgeSettings } from './bridge-options.js';
import { NetworkHub } from './network-hub.js';
import { parseSubnet } from './network-ipam.js';
import { parseSubnet6 } from './network-ipam6.js';
import type { NetnsTools } from './netns-ip.js';
import type { NetworkRecord, NetworkRecords } from './network-records.js';

/** How long the default bridge's namespace outlives its last container. */
const BRIDGE_IDLE_MS = 30_000;

/**
 * One {@link NetworkHub} per network while containers run on it, and on the default bridge one
 * per owner (the containers' owner label): a tenant's containers reach each other there, never
 * another owner's (dockerd has one bridge for all; here several tenants share the engine). A
 * user network's hub ends with its last container; a bridge hub outlives it for a while, since
 * `docker run --rm` one after another would make it each time.
 */
export class NetworkHubs {
  /** hub key (a network's id; on the default bridge, see {@link hubKey}) → the hub holding its namespace. */
  private readonly hubs = new Map<string, Promise<NetworkHub>>();
  /** container id → its owner (the owner label, '' for none), recorded when it starts or is connected. */
  readonly owners = new Map<string, string>();
  /** Bridge hubs without containers, ending after {@link BRIDGE_IDLE_MS}. */
  private readonly bridgeIdle = new Map<string, NodeJS.Timeout>();

  /** @param lookup a network's DNS answer: the addresses of a name asked by the container at `from`, or undefined for none */
  constructor(
    private readonly tools: NetnsTools & { unshare: string },
    private readonly records: NetworkRecords,
    private readonly endpoints: LiveEndpoints,
    private readonly lookup: (net: NetworkRecord, name: string, from: string) => string[] | undefined,
  ) {}

  /** Plugs a member's namespace (`pid`) into its network's hub, the hub made first when needed; `extra`: `ip` commands run in it with the first leg. */
  async attach(net: NetworkRecord, id: string, name: string, pid: number, extra: string[] = []): Promise<void> {
    const member = net.members[id]!;
    const key = this.hubKey(net, id);
    const endpoint = this.endpoints.reserve(net, id, name, pid, key);
    try {
      const hub = await this.hub(net, key);
      await hub.attach(pid, endpoint, extra);
      member.ran = true;
    } catch (error) {
      this.endpoints.release(net.id, id);
      if (!this.hubInUse(net, key)) await this.emptied(net, key);
      throw EngineError.system(`cannot connect the container to network ${net.name}: ${(error as Error).message}`, error);
    }
  }

  /** Takes a container's leg off a network (`unplug`: its namespace still exists, so the veth is removed). */
  async detach(net: NetworkRecord, id: string, unplug = true): Promise<void> {
    const ep = this.endpoints.release(net.id, id);
    if (!ep) return;
    if (unplug) await (await this.hubs.get(ep.hub))?.detach(ep.pid, ep.ifname).catch(() => undefined);
    if (!this.hubInUse(net, ep.hub)) await this.emptied(net, ep.hub);
  }

  /** Ends a hub's namespace; a user network's (`key` is its id) takes its endpoints along. */
  async stop(key: string): Promise<void> {
    const hub = this.hubs.get(key);
    this.hubs.delete(key);
    this.endpoints.clear(key);
    await (await hub?.catch(() => undefined))?.stop();
  }

  /** Ends every hub (the server closing). */
  async close(): Promise<void> {
    for (const key of [...this.hubs.keys()]) await this.stop(key);
  }

  /** The hub a container's leg on a network plugs into: the network's own, and on the default bridge its owner's. */
  private hubKey(net: NetworkRecord, id: string): string {
    return this.records.isBridge(net) ? `${net.id}/${this.owners.get(id) ?? ''}` : net.id;
  }

  /** Whether a running container is still plugged into the hub. */
  private hubInUse(net: NetworkRecord, key: string): boolean {
    return [...this.endpoints.on(net.id).values()].some((ep) => ep.hub === key);
  }

  /** A hub without running containers: its namespace ends (a default bridge's after a while). */
  private async emptied(net: NetworkRecord, key: string): Promise<void> {
    if (!this.records.isBridge(net)) return this.stop(key);
    clearTimeout(this.bridgeIdle.get(key));
    const idle = setTimeout(() => {
      this.bridgeIdle.delete(key);
      if (!this.hubInUse(net, key)) void this.stop(key);
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
      const v6 = net.enableIPv6 && net.subnet6 && net.gateway6 ? { gateway: net.gateway6, prefixLen: parseSubnet6(net.subnet6, 'subnet').prefixLen } : undefined;
      hub = NetworkHub.start(this.tools, net.gateway, prefixLen, (name, from) => this.lookup(net, name, from), this.records.isBridge(net) ? undefined : bridgeSettings(net.options), v6);
      hub.catch(() => this.hubs.delete(key));
      this.hubs.set(key, hub);
    }
    return hub;
  }
}
