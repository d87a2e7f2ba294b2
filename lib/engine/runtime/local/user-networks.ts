import type { EngineFilters } from '../../../engine-api/filters.js';
import type { NetworkConnectBody, NetworkCreateBody } from '../../../engine-api/network-operations.js';
import type { LocalContainer } from './local-container.js';

/**
 * User-defined networks, for an executor that makes them (the sandbox's, on network namespaces
 * of its own): what `LocalRuntime` forwards the network routes to, and what its views ask about
 * a container's endpoints. Errors are EngineErrors with dockerd's words.
 */
export interface LocalUserNetworks {
  /** Predefined networks these serve themselves (the sandbox's shared `bridge`); the runtime shows the others. */
  readonly predefined: readonly string[];
  create(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }>;
  remove(ref: string): Promise<void>;
  prune(filters: EngineFilters): Promise<{ NetworksDeleted: string[] }>;
  connect(ref: string, container: LocalContainer, body: NetworkConnectBody): Promise<void>;
  disconnect(ref: string, container: LocalContainer, force: boolean): Promise<void>;
  /** The user networks' `GET /networks` entries matching `filters` (the predefined ones are the runtime's). */
  list(filters: EngineFilters, containers: LocalContainer[]): Record<string, unknown>[];
  /** One user network's inspect body, or undefined when `ref` names none (full id, name, id prefix). */
  inspect(ref: string, containers: LocalContainer[]): Record<string, unknown> | undefined;
  /** A container's endpoints on user networks, as inspect's `NetworkSettings.Networks` shows them. */
  endpoints(container: Pick<LocalContainer, 'id'>): Record<string, Record<string, unknown>>;
}
