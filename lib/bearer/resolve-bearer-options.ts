import type { Response } from 'express';
import type { JWTVerifyGetKey } from 'jose';
import type { RegistryError } from './errors/registry-error.js';
import { writeRegistryError } from './errors/write-registry-error.js';
import { isQuotable } from '../http/quoted-string.js';
import type { BearerAlgorithm, BearerOptions } from './bearer-options.js';
import { resolveKeySource } from './keys/key-source.js';
import { resolveMetrics, type DockgateMetrics } from '../metrics/index.js';

/** Options after defaults and validation: what the middleware reads. */
export interface ResolvedBearerOptions extends ResolvedBearerVerification {
  realm: string;
}

/** Everything but the realm: what a guard verifies with and how it answers. */
export interface ResolvedBearerVerification {
  service: string;
  issuer: string;
  getKey: JWTVerifyGetKey;
  algorithms: BearerAlgorithm[];
  clockTolerance: number;
  cacheMaxEntries: number;
  now: () => number;
  writeError: (res: Response, err: RegistryError) => void;
  metrics?: DockgateMetrics;
}

const SUPPORTED: readonly BearerAlgorithm[] = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const DEFAULT_ALGORITHMS: BearerAlgorithm[] = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512'];

function headerValue(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0 || !isQuotable(value)) {
    throw new TypeError(`"${name}" must be a non-empty string without control or non-Latin-1 characters`);
  }
  return value;
}

/** Validates the realm: an absolute http(s) URL that can be sent in a quoted header parameter. */
export function realmOf(value: unknown): string {
  let url: URL;
  try {
    url = new URL(value as string | URL);
  } catch {
    throw new TypeError('"realm" is required: the absolute http(s) URL of the token endpoint');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('"realm" must be an http(s) URL');
  return headerValue(value instanceof URL ? url.href : value, 'realm');
}

/**
 * Applies defaults and validates every option once, at construction: a misconfiguration is a
 * TypeError naming the option, never a per-request failure.
 */
export function resolveBearerOptions(options: BearerOptions): ResolvedBearerOptions {
  if (options === null || typeof options !== 'object') throw new TypeError('bearer options must be an object');
  const realm = realmOf(options.realm);
  return { realm, ...resolveBearerVerification(options) };
}

/** {@link resolveBearerOptions} without the realm, which `requireBearer(scope)` takes from a mounted tokenRouter. */
export function resolveBearerVerification(options: Omit<BearerOptions, 'realm'>): ResolvedBearerVerification {
  const source = resolveKeySource(options.keys);
  const fromService = source.tokenService;
  let service = options.service;
  if (service === undefined && fromService) {
    if (fromService.services.length !== 1) throw new TypeError('"service" is required: the token service issues tokens for several services');
    service = fromService.services[0];
  }
  service = headerValue(service, 'service');
  if (fromService && !fromService.services.includes(service)) throw new TypeError(`"service" ${service} is not one the token service issues tokens for`);
  const issuer = options.issuer ?? fromService?.issuer;
  if (typeof issuer !== 'string' || issuer.length === 0) throw new TypeError('"issuer" is required unless "keys" is a token service');
  const algorithms = options.algorithms === undefined ? DEFAULT_ALGORITHMS : [...options.algorithms];
  if (!Array.isArray(algorithms) || algorithms.length === 0 || !algorithms.every((a) => SUPPORTED.includes(a))) {
    throw new TypeError(`"algorithms" must be a non-empty list of ${SUPPORTED.join(', ')} (never none or HS*)`);
  }
  const clockTolerance = options.clockTolerance ?? 60;
  if (typeof clockTolerance !== 'number' || !Number.isFinite(clockTolerance) || clockTolerance < 0) {
    throw new TypeError('"clockTolerance" must be a non-negative number of seconds');
  }
  let cacheMaxEntries = 0;
  if (options.cache !== false) {
    const cache = options.cache ?? {};
    if (typeof cache !== 'object' || cache === null) throw new TypeError('"cache" must be an object or false');
    cacheMaxEntries = cache.maxEntries ?? 1000;
    if (!Number.isInteger(cacheMaxEntries) || cacheMaxEntries < 1) throw new TypeError('"cache.maxEntries" must be a positive integer');
  }
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new TypeError('"now" must be a function');
  const writeError = options.writeError ?? writeRegistryError;
  if (typeof writeError !== 'function') throw new TypeError('"writeError" must be a function');
  const metrics = resolveMetrics(options.metrics, 'bearerGuard');
  return { service, issuer, getKey: source.getKey, algorithms, clockTolerance, cacheMaxEntries, now, writeError, ...(metrics ? { metrics } : {}) };
}
