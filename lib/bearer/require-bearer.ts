import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ScopeSyntaxError, type ResourceScope } from '../scope/index.js';
import { accessRecords, type AccessRecord } from './access/missing-access.js';
import { grantsAll } from './access/missing-access.js';
import type { VerifiedBearer } from './verify/verified-bearer.js';
import { parseRequiredScopes, type BearerScope } from './access/required-scopes.js';
import type { BearerOptions } from './bearer-options.js';
import { formatBearerChallenge, type BearerChallengeError } from './challenge/format-challenge.js';
import { RegistryError, type AccessRecordDetail } from './errors/registry-error.js';
import { bearerTokenFrom } from './http/bearer-token-from.js';
import { KeySourceUnavailable } from './keys/key-source.js';
import { resolveBearerOptions, type ResolvedBearerOptions } from './resolve-bearer-options.js';
import { createBearerTokenVerifier, InvalidBearerToken } from './verify/verify-bearer-token.js';
import type { BearerResult } from '../metrics/index.js';

/** Per-route settings of a {@link BearerGuard}. */
export interface BearerRouteOptions {
  /**
   * Writes this route's failures, overriding the guard's `writeError` (e.g. `writeEngineAuthError`
   * for engine API routes guarded next to registry routes). Defaults to the guard's.
   */
  writeError?: BearerOptions['writeError'];
}

/**
 * Returns the middleware for one route's scope; realm, keys and the verified-token cache are
 * shared by all of them, so a token checked on one route is a cache hit on the others.
 */
export type BearerGuard = (scope: BearerScope, route?: BearerRouteOptions) => RequestHandler;

const MESSAGES: Record<'missing' | BearerChallengeError, string> = {
  missing: 'authentication required',
  invalid_token: 'invalid token',
  insufficient_scope: 'insufficient scope',
};

/** The bounded `result` label of a refusal: the challenge's error, or what else went wrong. */
function resultOf(err: RegistryError): BearerResult {
  if (err.errorCode === 'NAME_INVALID') return 'name_invalid';
  if (err.errorCode === 'UNAVAILABLE') return 'unavailable';
  return err.challenge?.includes('error="insufficient_scope"') ? 'insufficient_scope'
    : err.challenge?.includes('error="invalid_token"') ? 'invalid_token' : 'missing';
}

function detail(records: readonly AccessRecord[]): AccessRecordDetail[] {
  return records.map((r) => ({ Type: r.type, Class: r.class ?? '', Name: r.name, Action: r.action }));
}

function unauthorized(options: ResolvedBearerOptions, scopes: ResourceScope[], error?: BearerChallengeError): RegistryError {
  const challenge = formatBearerChallenge({ realm: options.realm, service: options.service, scopes, ...(error ? { error } : {}) });
  // Like the registry, the detail lists everything the request needs, not only what is missing.
  return new RegistryError('UNAUTHORIZED', MESSAGES[error ?? 'missing'], { status: 401, challenge, detail: detail(accessRecords(scopes)) });
}

/** Parsed requirements of a function scope, by the string it returned: a pull asks for the same one dozens of times. */
const MAX_PARSED = 1024;

function scopesOf(req: Request, scope: BearerScope, fixed: ResourceScope[] | undefined, parsed: Map<string, ResourceScope[]>): ResourceScope[] {
  if (fixed) return fixed;
  try {
    const wanted = (scope as (req: Request) => unknown)(req);
    if (typeof wanted !== 'string') return parseRequiredScopes(wanted);
    let scopes = parsed.get(wanted);
    if (!scopes) {
      scopes = parseRequiredScopes(wanted);
      // Bounded: names come from request paths. Dropping all at once is enough for a cache of parses.
      if (parsed.size >= MAX_PARSED) parsed.clear();
      parsed.set(wanted, scopes);
    }
    return scopes;
  } catch (err) {
    // A scope built from request data (a repository name in the path) that is outside the
    // grammar is the client's fault: the registry answers an invalid name with 400 NAME_INVALID.
    if (err instanceof ScopeSyntaxError) throw new RegistryError('NAME_INVALID', 'invalid repository name', { status: 400, detail: { reason: err.message }, cause: err });
    throw err;
  }
}

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
  const verify = createBearerTokenVerifier(resolved);
  return (scope, route = {}) => {
    if (typeof scope !== 'function' && typeof scope !== 'string' && !Array.isArray(scope)) {
      throw new TypeError('requireBearer scope must be a string, a list of strings or a function of the request');
    }
    const writeError = route.writeError ?? resolved.writeError;
    if (typeof writeError !== 'function') throw new TypeError('"writeError" must be a function');
    // A fixed requirement is parsed once; a mistake in it is the host's, reported at start-up.
    const fixed = typeof scope === 'function' ? undefined : parseRequiredScopes(scope);
    const results = resolved.metrics?.bearerResults;
    const parsed = new Map<string, ResourceScope[]>();
    const fail = (res: Response, next: NextFunction, err: unknown): void => {
      if (err instanceof RegistryError) {
        if (results) results[resultOf(err)] += 1;
        writeError(res, err);
      } else next(err);
    };
    const admit = (req: Request, next: NextFunction, scopes: ResourceScope[], bearer: VerifiedBearer): void => {
      if (!grantsAll(scopes, bearer.access)) throw unauthorized(resolved, scopes, 'insufficient_scope');
      req.bearer = bearer;
      if (results) results.ok += 1;
      next();
    };
    return (req, res, next) => {
      let scopes: ResourceScope[];
      let token: string | undefined;
      try {
        scopes = scopesOf(req, scope, fixed, parsed);
        token = bearerTokenFrom(req.headers.authorization);
        if (token === undefined) throw unauthorized(resolved, scopes);
        // A token seen before is answered without a promise: most requests of a pull are these.
        const cached = verify.cached(token);
        if (cached) {
          admit(req, next, scopes, cached);
          return;
        }
      } catch (err) {
        fail(res, next, err);
        return;
      }
      verify(token).then((bearer) => admit(req, next, scopes, bearer), (err: unknown) => {
        if (err instanceof InvalidBearerToken) throw unauthorized(resolved, scopes, 'invalid_token');
        if (err instanceof KeySourceUnavailable) throw new RegistryError('UNAVAILABLE', 'authentication service unavailable', { status: 503, retryAfter: 5, cause: err });
        throw err;
      }).catch((err: unknown) => fail(res, next, err));
    };
  };
}

/**
 * Protects one route: `bearerGuard(options)(scope)`. Each call has its own key set and cache, so
 * use {@link bearerGuard} for more than one route.
 *
 * @example
 * app.get('/v2/', requireBearer([], { realm: 'http://127.0.0.1:5001/token', keys: tokens }), (_req, res) => res.json({}));
 */
export function requireBearer(scope: BearerScope, options: BearerOptions): RequestHandler {
  return bearerGuard(options)(scope);
}
