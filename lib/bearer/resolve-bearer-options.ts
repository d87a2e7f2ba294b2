import type { Response } from 'express';
import type { JWTVerifyGetKey } from 'jose';
import type { RegistryError } from './errors/registry-error.js';
import { writeRegistryError } from './errors/write-registry-error.js';
import { isQuotable } from '../http/quoted-string.js';
import type { BearerAlgorithm, BearerOptions } from './bearer-options.js';
import { resolveKeySource } from './keys/key-source.js';
import { resolveMetrics, type DockgateMetrics } from '../metrics/index.js';
import { functionOption, httpUrl, integerOption, numberOption } from '../options/option-checks.js';

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
  if (value === undefined) throw new TypeError('"realm" is required: the absolute http(s) URL of the token endpoint');
  const url = httpUrl(value, 'realm');
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
  const clockTolerance = numberOption(options.clockTolerance ?? 60, 'clockTolerance', 0, 'seconds');
  let cacheMaxEntries = 0;
  if (options.cache !== false) {
    const cache = options.cache ?? {};
    if (typeof cache !== 'object' || cache === null) throw new TypeError('"cache" must be an object or false');
    cacheMaxEntries = integerOption(cache.maxEntries ?? 1000, 'cache.maxEntries', 1);
  }
  const now = functionOption(options.now ?? Date.now, 'now');
  const writeError = functionOption(options.writeError ?? writeRegistryError, 'writeError');
  const metrics = resolveMetrics(options.metrics, 'bearerGuard');
  return { service, issuer, getKey: source.getKey, algorithms, clockTolerance, cacheMaxEntries, now, writeError, ...(metrics ? { metrics } : {}) };
}
