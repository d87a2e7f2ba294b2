import type { EngineFilters } from './filters.js';

/** Whether a network name is one of dockerd's predefined networks (`bridge`, `host`, `none`), which nobody owns. */
export function isPredefinedNetwork(name: unknown): boolean {
  return name === 'bridge' || name === 'host' || name === 'none';
}

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

/** `POST /networks/create` body (types.NetworkCreateRequest), kept as sent: the runtime refuses what it cannot honor. */
export interface NetworkCreateBody {
  Name: string;
  [field: string]: unknown;
}

/** `POST /networks/{id}/connect` body: `Container` and its `EndpointConfig` (Aliases, IPAMConfig.IPv4Address). */
export interface NetworkConnectBody {
  Container: string;
  EndpointConfig?: Record<string, unknown> | null;
  [field: string]: unknown;
}

/**
 * Optional operations on user-defined networks (`docker network create/rm/prune/connect/disconnect`).
 * A runtime without them answers 501 naming the operation.
 */
export interface NetworkManagementOperations {
  /** `POST /networks/create` → `{Id, Warning}` (201). */
  createNetwork?(body: NetworkCreateBody, apiVersion: string): Promise<{ Id: string; Warning: string }>;
  /** `DELETE /networks/{id}`; 409 while containers run on it, 403 for a predefined one. */
  removeNetwork?(ref: string): Promise<void>;
  /** `POST /networks/prune` → `{NetworksDeleted}`; filters `label`, `until`. */
  pruneNetworks?(filters: EngineFilters): Promise<{ NetworksDeleted: string[] | null }>;
  /** `POST /networks/{id}/connect`. */
  connectNetwork?(ref: string, body: NetworkConnectBody): Promise<void>;
  /** `POST /networks/{id}/disconnect` (`Container`, `Force`). */
  disconnectNetwork?(ref: string, container: string, force: boolean): Promise<void>;
}
