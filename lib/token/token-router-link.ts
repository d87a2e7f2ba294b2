import type { Request } from 'express';
import type { DockgateMetrics } from '../metrics/index.js';
import type { TokenService } from './token-service.js';

/**
 * What `requireBearer(scope)` needs from a tokenRouter mounted in the same app: its keys, issuer
 * and services (the token service), where its token route is, and where to report a mistake.
 */
export interface TokenRouterLink {
  readonly tokenService: TokenService;
  /** The token route's path inside the router. */
  readonly tokenPath: string;
  /** The `realm` option: the token endpoint's public URL, when the host gave one. */
  readonly realm?: string;
  readonly onError: (err: unknown, req?: Request) => void;
  readonly metrics?: DockgateMetrics;
}

// Keyed by the router function itself: an app's router stack holds that function as a layer's
// handle, so a lookup finds a token router without a process-wide list (two apps in one process
// each find their own) and the entry dies with the router.
const links = new WeakMap<object, TokenRouterLink>();

/** Marks a tokenRouter's router function so `requireBearer(scope)` can find it through the app. */
export function linkTokenRouter(router: object, link: TokenRouterLink): void {
  links.set(router, link);
}

/** The link of a router stack layer's handle, when that handle is a tokenRouter. */
export function tokenRouterLink(handle: unknown): TokenRouterLink | undefined {
  return typeof handle === 'function' ? links.get(handle) : undefined;
}
