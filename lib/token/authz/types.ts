import type { ResourceScope } from '../../scope/index.js';

/**
 * What an authorizer is asked: who (after authentication) wants which resources.
 *
 * @example
 * const request: AuthorizationRequest = {
 *   account: 'alice', service: 'registry.local',
 *   scopes: [{ type: 'repository', name: 'alice/app', actions: ['pull', 'push'] }],
 * };
 */
export interface AuthorizationRequest {
  /** The authenticated identity's subject; `''` for an anonymous request. */
  account: string;
  /** The identity's labels, from the authenticator. */
  labels?: Record<string, string[]>;
  /** The `service` parameter: which registry the token is for. */
  service: string;
  /** Remote address as Express reports it (may be IPv4-mapped IPv6, e.g. `::ffff:127.0.0.1`). */
  ip?: string;
  /** The client's `client_id` parameter, when sent. */
  clientId?: string;
  /** Requested scopes, already merged, one per resource. */
  scopes: ResourceScope[];
}

/**
 * Host hook: returns the granted scopes — a subset (per resource, a subset of actions) of the
 * requested ones. Never throws for "denied": a denial is simply an absent resource or fewer actions.
 *
 * @example
 * const readOnly: Authorizer = ({ scopes }) =>
 *   scopes.map((s) => ({ ...s, actions: s.actions.filter((a) => a === 'pull') })).filter((s) => s.actions.length > 0);
 */
export type Authorizer = (request: AuthorizationRequest) => Promise<ResourceScope[]> | ResourceScope[];
