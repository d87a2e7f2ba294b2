import { isPredefinedNetwork } from '../../../engine-api/network-operations.js';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { ownerOf } from '../../policy/owner-label.js';
import { ownedFilters } from '../http/checkpoint.js';

/**
 * Networks under a narrowing (`onlyOwner`): the predefined ones (every tenant sees them) and the owner's own. Filtered
 * after the runtime's list rather than by a label filter, since predefined networks carry none.
 */
export function visibleNetworks(rows: Record<string, unknown>[], onlyOwner: string | undefined): Record<string, unknown>[] {
  if (onlyOwner === undefined) return rows;
  return rows.filter((n) => isPredefinedNetwork(n.Name) || ownerOf(n.Labels) === onlyOwner);
}

/**
 * The networks with their `Containers` map narrowed to the owner's containers: another tenant's
 * container ids, names and addresses on a shared (predefined) network are not the caller's to see.
 */
export async function withOwnContainers(runtime: ContainerRuntime, networks: Record<string, unknown>[], onlyOwner: string | undefined): Promise<Record<string, unknown>[]> {
  if (onlyOwner === undefined) return networks;
  const hasMembers = networks.some((n) => n.Containers && typeof n.Containers === 'object' && Object.keys(n.Containers).length > 0);
  if (!hasMembers) return networks;
  const own = new Set((await runtime.list({ all: true, filters: ownedFilters(new Map(), onlyOwner) })).map((c) => c.Id));
  return networks.map((n) => {
    if (!n.Containers || typeof n.Containers !== 'object') return n;
    return { ...n, Containers: Object.fromEntries(Object.entries(n.Containers).filter(([id]) => own.has(id))) };
  });
}
