import { createLocalJWKSet, createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import type { TokenService } from '../../token/index.js';
import type { BearerKeys } from '../bearer-options.js';
import { pemToJwks } from './pem-jwks.js';
import { DockgateError } from '../../errors/dockgate-error.js';
import { httpUrl, numberOption } from '../../options/option-checks.js';

/** The verification keys, resolved once, and what the source says about issuer and service. */
export interface KeySource {
  getKey: JWTVerifyGetKey;
  /** Set when the keys belong to a token service in this process. */
  tokenService?: TokenService;
}

/** The remote JWKS could not be fetched: the token is not known to be bad, so this is a 503, not a 401. */
export class KeySourceUnavailable extends DockgateError {
  static override code = 'ERR_BEARER_KEYS_UNAVAILABLE';
  override readonly code = 'ERR_BEARER_KEYS_UNAVAILABLE';
}

// Errors of the remote JWKS lookup that say something about the token (no key for its kid or
// alg), as opposed to the JWKS endpoint being down or answering garbage.
const TOKEN_FAULTS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'ERR_JOSE_NOT_SUPPORTED']);

function tokenServiceOf(keys: object): TokenService | undefined {
  const candidate = 'tokenService' in keys ? (keys as { tokenService: unknown }).tokenService : keys;
  const service = candidate as Partial<TokenService> | null;
  if (service && typeof service === 'object' && service.keyRing && typeof service.issuer === 'string') return service as TokenService;
  return undefined;
}

function milliseconds(value: unknown, name: string): number | undefined {
  return value === undefined ? undefined : numberOption(value, name, 0, 'milliseconds');
}

function remoteSource(keys: Extract<BearerKeys, { jwksUrl: unknown }>): KeySource {
  const url = httpUrl(keys.jwksUrl, 'keys.jwksUrl');
  const timeoutDuration = milliseconds(keys.timeoutDuration, 'keys.timeoutDuration');
  const cooldownDuration = milliseconds(keys.cooldownDuration, 'keys.cooldownDuration');
  const cacheMaxAge = milliseconds(keys.cacheMaxAge, 'keys.cacheMaxAge');
  const remote = createRemoteJWKSet(url, {
    ...(timeoutDuration !== undefined ? { timeoutDuration } : {}),
    ...(cooldownDuration !== undefined ? { cooldownDuration } : {}),
    ...(cacheMaxAge !== undefined ? { cacheMaxAge } : {}),
  });
  const getKey: JWTVerifyGetKey = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      if (TOKEN_FAULTS.has((err as { code?: string }).code ?? '')) throw err;
      throw new KeySourceUnavailable('the remote JWKS could not be fetched', { cause: err });
    }
  };
  return { getKey };
}

/**
 * Resolves the `keys` option once, at construction.
 *
 * @throws {TypeError} naming the option when it is none of the supported sources.
 */
export function resolveKeySource(keys: BearerKeys): KeySource {
  if (keys === null || (typeof keys !== 'object' && typeof keys !== 'function')) {
    throw new TypeError('"keys" is required: a tokenRouter, its tokenService, { pem }, { jwks } or { jwksUrl }');
  }
  const tokenService = tokenServiceOf(keys);
  if (tokenService) return { getKey: createLocalJWKSet(tokenService.keyRing.jwks), tokenService };
  if ('pem' in keys) {
    if (typeof keys.pem !== 'string' && !Buffer.isBuffer(keys.pem)) throw new TypeError('"keys.pem" must be a PEM string or Buffer');
    return { getKey: createLocalJWKSet(pemToJwks(keys.pem)) };
  }
  if ('jwks' in keys) {
    const jwks = keys.jwks;
    if (!jwks || !Array.isArray(jwks.keys) || jwks.keys.length === 0) throw new TypeError('"keys.jwks" must be a JWKS with at least one key');
    if (jwks.keys.some((k) => 'd' in k || k.kty === 'oct')) throw new TypeError('"keys.jwks" must hold public keys only');
    return { getKey: createLocalJWKSet(jwks) };
  }
  if ('jwksUrl' in keys) return remoteSource(keys);
  throw new TypeError('"keys" must be a tokenRouter, its tokenService, { pem }, { jwks } or { jwksUrl }');
}
