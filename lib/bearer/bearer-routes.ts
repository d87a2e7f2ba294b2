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
import type { ResolvedBearerVerification } from './resolve-bearer-options.js';
import { createBearerTokenVerifier, InvalidBearerToken } from './verify/verify-bearer-token.js';
import type { BearerResult } from '../metrics/index.js';
import { functionOption } from '../options/option-checks.js';

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

function unauthorized(realm: string, service: string, scopes: ResourceScope[], error?: BearerChallengeError): RegistryError {
  const challenge = formatBearerChallenge({ realm, service, scopes, ...(error ? { error } : {}) });
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
 * Checks a route's scope requirement where the route is declared, so a mistake is reported at
 * start-up; returns the parsed scopes of a fixed one (a function of the request is parsed per request).
 *
 * @throws {TypeError} or {ScopeSyntaxError} for a requirement outside the grammar.
 */
export function fixedScopes(scope: BearerScope): ResourceScope[] | undefined {
  checkScope(scope);
  return typeof scope === 'function' ? undefined : parseRequiredScopes(scope);
}

function checkScope(scope: unknown): void {
  if (typeof scope !== 'function' && typeof scope !== 'string' && !Array.isArray(scope)) {
    throw new TypeError('requireBearer scope must be a string, a list of strings or a function of the request');
  }
}

/**
 * The guard of resolved options: one verifier (keys and verified-token cache) shared by every
 * route it makes. `realmFor` names the token endpoint in a challenge: a fixed URL, or one built
 * from the request when the realm comes from a tokenRouter mounted in the same app.
 */
export function guardRoutes(resolved: ResolvedBearerVerification, realmFor: (req: Request) => string): BearerGuard {
  const verify = createBearerTokenVerifier(resolved);
  return (scope, route = {}) => {
    const writeError = functionOption(route.writeError ?? resolved.writeError, 'writeError');
    // A fixed requirement is parsed once; a mistake in it is the host's, reported at start-up.
    const fixed = fixedScopes(scope);
    const results = resolved.metrics?.bearerResults;
    const parsed = new Map<string, ResourceScope[]>();
    const fail = (res: Response, next: NextFunction, err: unknown): void => {
      if (err instanceof RegistryError) {
        if (results) results[resultOf(err)] += 1;
        writeError(res, err);
      } else next(err);
    };
    const admit = (req: Request, next: NextFunction, scopes: ResourceScope[], bearer: VerifiedBearer): void => {
      if (!grantsAll(scopes, bearer.access)) throw unauthorized(realmFor(req), resolved.service, scopes, 'insufficient_scope');
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
        if (token === undefined) throw unauthorized(realmFor(req), resolved.service, scopes);
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
        if (err instanceof InvalidBearerToken) throw unauthorized(realmFor(req), resolved.service, scopes, 'invalid_token');
        if (err instanceof KeySourceUnavailable) throw new RegistryError('UNAVAILABLE', 'authentication service unavailable', { status: 503, retryAfter: 5, cause: err });
        throw err;
      }).catch((err: unknown) => fail(res, next, err));
    };
  };
}
