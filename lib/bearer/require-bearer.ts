import type { RequestHandler } from 'express';
import type { BearerScope } from './access/required-scopes.js';
import { appBearer } from './app/app-bearer.js';
import type { BearerOptions } from './bearer-options.js';
import { guardRoutes, type BearerGuard } from './bearer-routes.js';
import { resolveBearerOptions } from './resolve-bearer-options.js';

export type { BearerGuard, BearerRouteOptions } from './bearer-routes.js';

/**
 * Configures bearer protection once (realm, keys, issuer, service, cache) and returns a function
 * making the middleware for each route's required scope. Prefer it to {@link requireBearer} when
 * several routes are protected: they then share one key set and one verified-token cache.
 *
 * Failures answer like distribution's token access controller: 401 with
 * `WWW-Authenticate: Bearer realm,service[,scope][,error]` and an UNAUTHORIZED body; a scope built
 * from a malformed request is 400 NAME_INVALID; an unreachable remote JWKS is 503 UNAVAILABLE.
 * On success `req.bearer` (or {@link bearerOf}) holds the subject and access.
 *
 * @example
 * const guard = bearerGuard({ realm: 'https://auth.example/token', keys: tokens }); // tokens = tokenRouter({...})
 * app.get('/v2/', guard([]), (_req, res) => res.json({}));
 * app.get('/v2/*name/tags/list', guard((req) => `repository:${(req.params.name as string[]).join('/')}:pull`), listTags);
 * @throws {TypeError} naming the option when an option is invalid.
 */
export function bearerGuard(options: BearerOptions): BearerGuard {
  const resolved = resolveBearerOptions(options);
  const realm = resolved.realm;
  return guardRoutes(resolved, () => realm);
}

/**
 * Protects one route.
 *
 * With one argument it uses the tokenRouter mounted in the same Express app (this app or one it
 * is mounted in, nested routers included): its keys, issuer and service verify, and the
 * challenge's realm is its token route as mounted (`<protocol>://<Host><mount path><tokenPath>`,
 * or tokenRouter's `realm` option). The router is found at the first request and kept per app;
 * none found, or two, is a `BearerSetupError` reported to the token service's `onError` (stderr
 * without one) and a 500 to the client.
 *
 * With options it is `bearerGuard(options)(scope)`, for a resource server without a token router.
 * Each such call has its own key set and cache, so use {@link bearerGuard} for more than one route.
 *
 * @example
 * app.use(tokenRouter({ issuer, service, keys, authenticate }));
 * app.get('/v2/x/tags/list', requireBearer('repository:x:pull'), listTags);
 * // a resource server elsewhere:
 * app.get('/v2/', requireBearer([], { realm: 'https://auth.example/token', keys: { jwksUrl: 'https://auth.example/jwks' } }), (_req, res) => res.json({}));
 * @throws {TypeError} naming the option when an option or the scope is invalid.
 */
export function requireBearer(scope: BearerScope, options?: BearerOptions): RequestHandler {
  if (options === undefined) return appBearer(scope);
  return bearerGuard(options)(scope);
}
