import { createHash } from 'node:crypto';
import { EngineError } from '../../../engine-api/engine-error.js';
import { nameFilter } from '../../../engine-api/name-pattern.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import { labelMatches } from './label-filter.js';
import type { LocalContainer, LocalNetworkName, LocalUserNetworks } from './local-container.js';

/** dockerd's drivers for its predefined networks. */
const DRIVER = { bridge: 'bridge', host: 'host', none: 'null' } as const;

/** `GET /networks` filters dockerd accepts. */
export const NETWORK_FILTERS = ['name', 'id', 'driver', 'type', 'scope', 'label', 'dangling'] as const;

/**
 * The predefined networks a local runtime really has, as dockerd shows them
 * (types/network.Inspect): `host` when containers share the server's stack, `none` when they
 * have no network, `bridge` when each container gets a network namespace of its own (the
 * sandbox's default, through a user-mode stack: there is no bridge device, and containers do not
 * reach each other through it).
 */
export class LocalNetworks {
  private readonly created = new Date().toISOString();

  constructor(private readonly names: readonly LocalNetworkName[], private readonly user?: LocalUserNetworks) {}

  list(filters: EngineFilters, containers: LocalContainer[]): Record<string, unknown>[] {
    const custom = this.user?.list(filters, containers) ?? [];
    // `type=custom` asks for user-defined networks only.
    const served = this.user?.predefined ?? [];
    const named = nameFilter(filters);
    const builtin = filters.get('type')?.has('custom') && !filters.get('type')?.has('builtin') ? [] : this.names.filter((n) => !served.includes(n) && named(n) && matches(n, filters));
    return [...builtin.map((n) => this.view(n, containers)), ...custom];
  }

  inspect(ref: string, scope: string | undefined, containers: LocalContainer[]): Record<string, unknown> {
    const custom = scope === undefined || scope === 'local' ? this.user?.inspect(ref, containers) : undefined;
    if (custom) return custom;
    const served = this.user?.predefined ?? [];
    const name =
      this.names.find((n) => !served.includes(n) && (n === ref || networkId(n) === ref)) ??
      (/^[0-9a-f]+$/.test(ref) ? this.names.find((n) => !served.includes(n) && networkId(n).startsWith(ref)) : undefined);
    if (!name || (scope !== undefined && scope !== 'local')) throw EngineError.notFound(`network ${ref} not found`);
    return this.view(name, containers);
  }

  private view(name: LocalNetworkName, containers: LocalContainer[]): Record<string, unknown> {
    return {
      Name: name,
      Id: networkId(name),
      Created: this.created,
      Scope: 'local',
      Driver: DRIVER[name],
      EnableIPv6: false,
      IPAM: { Driver: 'default', Options: null, Config: name === 'bridge' ? [{ Subnet: '10.0.2.0/24', Gateway: '10.0.2.2' }] : [] },
      Internal: false,
      Attachable: false,
      Ingress: false,
      ConfigFrom: { Network: '' },
      ConfigOnly: false,
      Containers: Object.fromEntries(
        attached(name, containers, this.names).map((c) => [c.id, { Name: c.name, EndpointID: '', MacAddress: '', IPv4Address: '', IPv6Address: '' }]),
      ),
      Options: {},
      Labels: {},
    };
  }
}

/** A stable 64-hex id per predefined network name. */
export function networkId(name: string): string {
  return createHash('sha256').update(`dockgate-network:${name}`).digest('hex');
}

/**
 * The running containers in a network: each in the one its NetworkMode names, where `default`
 * is `bridge` when the runtime has one (each container's own namespace) and `host` otherwise.
 */
function attached(name: LocalNetworkName, containers: LocalContainer[], names: readonly LocalNetworkName[]): LocalContainer[] {
  const fallback = names.includes('bridge') ? 'bridge' : 'host';
  return containers.filter((c) => {
    const mode = c.spec.host.networkMode;
    return c.status === 'running' && (mode === '' || mode === 'default' ? fallback : mode) === name;
  });
}

function matches(name: LocalNetworkName, filters: EngineFilters): boolean {
  const test = (key: string, ok: (v: string) => boolean): boolean => {
    const values = filters.get(key);
    return !values || values.size === 0 || [...values].some(ok);
  };
  return (
    test('id', (v) => networkId(name).startsWith(v)) &&
    test('driver', (v) => v === DRIVER[name]) &&
    test('type', (v) => {
      if (v !== 'builtin' && v !== 'custom') throw EngineError.invalidParameter(`invalid filter: 'type'='${v}'`);
      return v === 'builtin';
    }) &&
    test('scope', (v) => v === 'local') &&
    test('label', (v) => labelMatches({}, v)) &&
    // Predefined networks are never dangling, and always listed with dangling=false (dockerd's filterNetworkByUse).
    test('dangling', (v) => {
      if (!['true', '1', 'false', '0'].includes(v)) throw EngineError.invalidParameter(`invalid filter 'dangling=${v}'`);
      return v === 'false' || v === '0';
    })
  );
}
