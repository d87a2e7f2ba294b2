import type { EngineFilters } from './filters.js';

/** Options of `GET /networks/{id}`. */
export interface NetworkInspectOptions {
  /** `verbose` (API ≥ 1.28): swarm services and tasks; local networks have none. */
  verbose: boolean;
  /** `scope` (API ≥ 1.31): only a network of this scope matches. */
  scope?: string;
  apiVersion: string;
}

/**
 * Optional network operations: what clients list and inspect (`docker network ls`,
 * `docker network inspect`, testcontainers' network checks). Networks are dockerd's
 * types/network.Inspect objects; the router trims them per API version.
 */
export interface NetworkOperations {
  /** `GET /networks` body (`filters`: `name`, `id`, `driver`, `type`, `scope`, `label`). */
  listNetworks(filters: EngineFilters, apiVersion: string): Promise<Record<string, unknown>[]>;
  /** `GET /networks/{id}` body; by full id, name, or unique id prefix; unknown → 404 `network <x> not found`. */
  inspectNetwork(ref: string, options: NetworkInspectOptions): Promise<Record<string, unknown>>;
}
