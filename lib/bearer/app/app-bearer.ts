import type { Application, Request, RequestHandler } from 'express';
import { isQuotable } from '../../http/quoted-string.js';
import type { TokenRouterLink } from '../../token/token-router-link.js';
import type { BearerScope } from '../access/required-scopes.js';
import { fixedScopes, guardRoutes } from '../bearer-routes.js';
import { BearerSetupError } from '../errors/bearer-setup-error.js';
import { RegistryError } from '../errors/registry-error.js';
import { writeRegistryError } from '../errors/write-registry-error.js';
import { resolveBearerVerification } from '../resolve-bearer-options.js';
import { findTokenRouters } from './find-token-router.js';

const REMEDIES = 'mount a tokenRouter in the app that serves this route (app.use(tokenRouter({...}))), '
  + 'or give the keys and realm yourself: requireBearer(scope, { realm, keys }) or bearerGuard({ realm, keys })';

/** What the first request of an app resolved: a guard, or the setup mistake it answers with. */
type Resolution = { handler: RequestHandler } | { error: BearerSetupError };

function defaultReport(err: BearerSetupError): void {
  console.error(`[dockgate] ${err.name} (${err.code}): ${err.message}`);
}

/** A realm built from the request: the token route as the client reached this app. */
function requestRealm(path: string): (req: Request) => string {
  return (req) => {
    const host = req.host;
    const realm = `${req.protocol}://${host}${path}`;
    // Node's parser already refuses control characters in headers; a Host with a quote or a
    // space still cannot break the challenge, which quotes and escapes it.
    if (!host || !isQuotable(realm)) throw new RegistryError('UNSUPPORTED', 'a Host header naming this server is required', { status: 400 });
    return realm;
  };
}

function resolve(app: Application, scope: BearerScope): Resolution & { link?: TokenRouterLink } {
  const found = findTokenRouters(app);
  const links = [...new Set(found.map((f) => f.link))];
  const link = links[0];
  if (!link) {
    return { error: new BearerSetupError(`requireBearer(scope) without options found no tokenRouter mounted in this app: ${REMEDIES}`) };
  }
  if (links.length > 1) {
    return { link, error: new BearerSetupError(`requireBearer(scope) without options found ${links.length} tokenRouters in this app and cannot choose: ${REMEDIES}`) };
  }
  let realmFor: (req: Request) => string;
  if (link.realm !== undefined) {
    const realm = link.realm;
    realmFor = () => realm;
  } else {
    const paths = new Set(found.map((f) => f.tokenRoutePath));
    const [path] = paths;
    if (paths.size !== 1 || path === undefined) {
      return { link, error: new BearerSetupError('requireBearer(scope) cannot tell the token route\'s URL: the tokenRouter is mounted at a pattern or at several paths. '
        + 'Give tokenRouter a "realm" option (the public URL of its token endpoint), or use requireBearer(scope, { realm, keys })') };
    }
    realmFor = requestRealm(path);
  }
  try {
    // Throws when the token service issues tokens for several services: which one is this route's?
    const resolved = resolveBearerVerification({ keys: link.tokenService });
    if (link.metrics) resolved.metrics = link.metrics;
    return { link, handler: guardRoutes(resolved, realmFor)(scope) };
  } catch (err) {
    return { link, error: new BearerSetupError(`requireBearer(scope) cannot use the mounted tokenRouter (${(err as Error).message}): `
      + 'use requireBearer(scope, { realm, keys: tokens, service }) or bearerGuard({ realm, keys: tokens, service })', { cause: err }) };
  }
}

/**
 * `requireBearer(scope)`: the keys, issuer, service and realm of the tokenRouter mounted in the
 * same app, found through the app at the first request (when the app is assembled) and kept per
 * app. Nothing is process-wide: two apps in one process each find their own token router.
 */
export function appBearer(scope: BearerScope): RequestHandler {
  // The scope is checked now, where the route is declared, like the two-argument form.
  fixedScopes(scope);
  const byApp = new WeakMap<object, RequestHandler>();
  return (req, res, next) => {
    let handler = byApp.get(req.app);
    if (!handler) {
      const resolution = resolve(req.app, scope);
      if ('handler' in resolution) handler = resolution.handler;
      else {
        const { error, link } = resolution;
        if (link) link.onError(error, req);
        else defaultReport(error);
        handler = (_req, response) => writeRegistryError(response, new RegistryError('UNKNOWN', 'bearer authentication is not configured on this server', { status: 500 }));
      }
      byApp.set(req.app, handler);
    }
    handler(req, res, next);
  };
}
