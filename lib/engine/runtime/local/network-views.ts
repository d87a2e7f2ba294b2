import type { LocalContainer, LocalNetworkSettings } from './local-container.js';
import { networkId } from './local-networks.js';

/**
 * Inspect's `NetworkSettings` as dockerd 20.10 writes it (API 1.41). A container with its own
 * network (the sandbox's default) reports its address, gateway and published ports while it
 * runs; a container sharing the server's network has none (`Ports` is {}). A created or exited
 * container has every field empty, and in `Networks` the networks it will join at its start
 * (`stoppedNetworks`, as its executor keeps them): docker-py and testcontainers read
 * `Networks[name]` right after a create.
 */
export function networkSettingsView(c: LocalContainer, stoppedNetworks?: Record<string, Record<string, unknown>>): Record<string, unknown> {
  if (c.status !== 'running') return { ...EMPTY_SETTINGS, Ports: {}, Networks: stoppedNetworks ?? {} };
  const net = c.process?.network;
  if (!net) return { ...EMPTY_SETTINGS, Ports: {}, Networks: stacklessNetworks(c) };
  // The top-level fields are the default bridge's endpoint; empty on user-defined networks only, as dockerd's.
  const endpoint = net.network !== '' ? endpointView(net) : net.endpoints?.().bridge;
  const bridge = endpoint !== undefined;
  return {
    Bridge: '',
    SandboxID: '',
    HairpinMode: false,
    LinkLocalIPv6Address: '',
    LinkLocalIPv6PrefixLen: 0,
    Ports: net.ports,
    SandboxKey: `/proc/${c.pid}/ns/net`,
    SecondaryIPAddresses: null,
    SecondaryIPv6Addresses: null,
    EndpointID: bridge ? endpoint.EndpointID : '',
    Gateway: bridge ? endpoint.Gateway : '',
    GlobalIPv6Address: '',
    GlobalIPv6PrefixLen: 0,
    IPAddress: bridge ? endpoint.IPAddress : '',
    IPPrefixLen: bridge ? endpoint.IPPrefixLen : 0,
    IPv6Gateway: '',
    MacAddress: bridge ? endpoint.MacAddress : '',
    Networks: networksOf(net),
  };
}

/** The top-level fields of a container without a running network stack (dockerd's values when it does not run). */
const EMPTY_SETTINGS = {
  Bridge: '', SandboxID: '', HairpinMode: false, LinkLocalIPv6Address: '', LinkLocalIPv6PrefixLen: 0, SandboxKey: '',
  SecondaryIPAddresses: null, SecondaryIPv6Addresses: null, EndpointID: '', Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0,
  IPAddress: '', IPPrefixLen: 0, IPv6Gateway: '', MacAddress: '',
};

/** `GET /containers/json` `Ports`: one entry per published binding, and exposed ports without a host side. */
export function portsSummary(c: LocalContainer): Record<string, unknown>[] {
  const net = c.status === 'running' ? c.process?.network : undefined;
  if (!net) return [];
  return Object.entries(net.ports).flatMap(([key, bindings]) => {
    const [port = '0', type = 'tcp'] = key.split('/');
    if (!bindings) return [{ PrivatePort: Number(port), Type: type }];
    return bindings.map((b) => ({ IP: b.HostIp, PrivatePort: Number(port), PublicPort: Number(b.HostPort), Type: type }));
  });
}

/**
 * The summary's `NetworkSettings.Networks`, as `docker ps --format '{{.Networks}}'` reads it. A
 * container that does not run lists the networks it will join (`stoppedNetworks`, as inspect
 * shows them) with `Aliases` null, as dockerd 20.10's list does.
 */
export function summaryNetworks(c: LocalContainer, stoppedNetworks?: Record<string, Record<string, unknown>>): Record<string, unknown> {
  if (c.status !== 'running') {
    const out: Record<string, unknown> = {};
    for (const [name, endpoint] of Object.entries(stoppedNetworks ?? {})) out[name] = { ...endpoint, Aliases: null };
    return out;
  }
  const net = c.process?.network;
  return net ? networksOf(net) : stacklessNetworks(c);
}

/**
 * A running container with no network stack of its own: on `host` or `none` it is on that
 * predefined network, with an endpoint and no address (dockerd's, which docker-compose reads back);
 * sharing another container's stack it lists none.
 */
function stacklessNetworks(c: LocalContainer): Record<string, unknown> {
  const mode = c.spec.host.networkMode;
  if (mode !== 'host' && mode !== 'none') return {};
  const none = { network: mode, ipAddress: '', gateway: '', prefixLen: 0, macAddress: '' };
  return { [mode]: { ...endpointView(none), EndpointID: networkId(`${mode}:${c.id}`) } };
}

/** `NetworkSettings.Networks`: the default bridge's endpoint, when on it, and those on user-defined networks. */
function networksOf(net: LocalNetworkSettings): Record<string, unknown> {
  return { ...(net.network !== '' ? { [net.network]: endpointView(net) } : {}), ...net.endpoints?.() };
}

function endpointView(net: Pick<LocalNetworkSettings, 'network' | 'ipAddress' | 'gateway' | 'prefixLen' | 'macAddress'>): Record<string, unknown> {
  return {
    IPAMConfig: null,
    Links: null,
    Aliases: null,
    NetworkID: networkId(net.network),
    // One endpoint per run of the container: its stack's address never changes, so its id need not either.
    EndpointID: networkId(`${net.network}:${net.ipAddress}`),
    Gateway: net.gateway,
    IPAddress: net.ipAddress,
    IPPrefixLen: net.prefixLen,
    IPv6Gateway: '',
    GlobalIPv6Address: '',
    GlobalIPv6PrefixLen: 0,
    MacAddress: net.macAddress,
    DriverOpts: null,
  };
}
