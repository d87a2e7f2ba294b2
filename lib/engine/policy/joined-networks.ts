import { notFound, type PolicyDecision, type PolicyRequest } from './policy-types.js';

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
