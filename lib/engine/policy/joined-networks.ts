import { notFound, type PolicyDecision, type PolicyRequest } from './policy-types.js';

/** The modes that name no user network: the predefined ones and another container's stack. */
const NOT_A_USER_NETWORK = new Set(['', 'default', 'bridge', 'host', 'none']);

/**
 * The networks a container's start joins by name, from its inspect body: a user network's
 * `HostConfig.NetworkMode` and the keys of `NetworkSettings.Networks` (its endpoints).
 */
export function networksJoined(inspect: Readonly<Record<string, unknown>>): string[] {
  const out = new Set<string>();
  const mode = (inspect.HostConfig as { NetworkMode?: unknown } | undefined)?.NetworkMode;
  if (typeof mode === 'string' && !NOT_A_USER_NETWORK.has(mode) && !mode.startsWith('container:')) out.add(mode);
  const networks = (inspect.NetworkSettings as { Networks?: unknown } | undefined)?.Networks;
  if (networks && typeof networks === 'object') {
    for (const name of Object.keys(networks)) if (!NOT_A_USER_NETWORK.has(name)) out.add(name);
  }
  return [...out];
}

/** The actions that make a container join the networks it names (dockerd joins them by name at each start). */
export const JOINS_NETWORKS: ReadonlySet<string> = new Set(['container.start', 'container.restart']);

/**
 * A 404 `network X not found` when a network the target container joins by name exists and is
 * not the caller's: one made by another tenant after the container's create (which a network
 * that did not exist yet passes). Undefined when every such network is the caller's, predefined
 * or absent (the runtime answers its own error for an absent one).
 */
export async function foreignJoinedNetwork(request: PolicyRequest, subject: string): Promise<PolicyDecision | undefined> {
  const { target } = request;
  if (target?.kind !== 'container') return undefined;
  for (const name of target.networks ?? []) {
    const network = await request.lookup.network(name);
    if (network === null || network === undefined || network.predefined) continue;
    if (network.owner !== subject) return notFound(`network ${name} not found`);
  }
  return undefined;
}
