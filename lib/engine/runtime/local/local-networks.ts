import { createHash } from 'node:crypto';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import { labelMatches } from './label-filter.js';
import type { LocalContainer } from './local-container.js';

/** dockerd's drivers for its predefined networks. */
const DRIVER = { host: 'host', none: 'null' } as const;

/** `GET /networks` filters dockerd accepts. */
export const NETWORK_FILTERS = ['name', 'id', 'driver', 'type', 'scope', 'label', 'dangling'] as const;

/**
 * The predefined networks a local runtime really has, as dockerd shows them
 * (types/network.Inspect): `host` when containers share the server's stack, `none` when they
 * have no network. No `bridge`: a local runtime builds no bridge.
 */
export class LocalNetworks {
  private readonly created = new Date().toISOString();

  constructor(private readonly names: readonly ('host' | 'none')[]) {}

  list(filters: EngineFilters, containers: LocalContainer[]): Record<string, unknown>[] {
    return this.names.filter((n) => matches(n, filters)).map((n) => this.view(n, containers));
  }

  inspect(ref: string, scope: string | undefined, containers: LocalContainer[]): Record<string, unknown> {
    const name =
      this.names.find((n) => n === ref || networkId(n) === ref) ??
      (/^[0-9a-f]+$/.test(ref) ? this.names.find((n) => networkId(n).startsWith(ref)) : undefined);
    if (!name || (scope !== undefined && scope !== 'local')) throw EngineError.notFound(`network ${ref} not found`);
    return this.view(name, containers);
  }

  private view(name: 'host' | 'none', containers: LocalContainer[]): Record<string, unknown> {
    return {
      Name: name,
      Id: networkId(name),
      Created: this.created,
      Scope: 'local',
      Driver: DRIVER[name],
      EnableIPv6: false,
      IPAM: { Driver: 'default', Options: null, Config: [] },
      Internal: false,
      Attachable: false,
      Ingress: false,
      ConfigFrom: { Network: '' },
      ConfigOnly: false,
      Containers: Object.fromEntries(
        attached(name, containers).map((c) => [c.id, { Name: c.name, EndpointID: '', MacAddress: '', IPv4Address: '', IPv6Address: '' }]),
      ),
      Options: {},
      Labels: {},
    };
  }
}

/** A stable 64-hex id per predefined network name. */
function networkId(name: string): string {
  return createHash('sha256').update(`dockgate-network:${name}`).digest('hex');
}

/** Running containers are all in the one network the runtime gives them. */
function attached(name: string, containers: LocalContainer[]): LocalContainer[] {
  return containers.filter((c) => c.status === 'running' && (c.body.HostConfig?.NetworkMode ?? 'default') !== (name === 'host' ? 'none' : 'host'));
}

function matches(name: 'host' | 'none', filters: EngineFilters): boolean {
  const test = (key: string, ok: (v: string) => boolean): boolean => {
    const values = filters.get(key);
    return !values || values.size === 0 || [...values].some(ok);
  };
  return (
    test('name', (v) => name.includes(v)) &&
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
