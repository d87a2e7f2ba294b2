import { jwtVerify, type CryptoKey, type JWTPayload, type JWTVerifyOptions } from 'jose';
import type { AccessEntry } from '../../scope/index.js';
import type { ResolvedBearerVerification } from '../resolve-bearer-options.js';
import { KeySourceUnavailable } from '../keys/key-source.js';
import { TokenCache } from './token-cache.js';
import type { VerifiedBearer } from './verified-bearer.js';
import { DockgateError } from '../../errors/dockgate-error.js';

/** The token is not one this service accepts (any reason: format, signature, key, claims). */
export class InvalidBearerToken extends DockgateError {
  static override code = 'ERR_BEARER_INVALID_TOKEN';
  override readonly code = 'ERR_BEARER_INVALID_TOKEN';
}

function isAccessEntry(value: unknown): value is AccessEntry {
  const e = value as Partial<AccessEntry> | null;
  return !!e && typeof e === 'object' && typeof e.type === 'string' && typeof e.name === 'string'
    && Array.isArray(e.actions) && e.actions.every((a) => typeof a === 'string');
}

function bearerFrom(payload: JWTPayload): VerifiedBearer {
  const access = payload.access ?? [];
  if (!Array.isArray(access) || !access.every(isAccessEntry)) throw new InvalidBearerToken('the access claim is malformed');
  if (payload.sub !== undefined && typeof payload.sub !== 'string') throw new InvalidBearerToken('the sub claim is malformed');
  // Frozen: a cached bearer is handed to every request carrying the same token.
  return Object.freeze({
    subject: payload.sub ?? '',
    access: Object.freeze(access.map((e) => Object.freeze({ type: e.type, name: e.name, actions: Object.freeze([...e.actions]) as string[] }))),
    expiresAt: new Date((payload.exp as number) * 1000),
    claims: Object.freeze(payload),
  });
}

/** A verify function bound to resolved options, with its own cache. */
export interface BearerTokenVerifier {
  (token: string): Promise<VerifiedBearer>;
  /** The cached verification of this token, if it is cached and not stale: no promise, no signature check. */
  cached(token: string): VerifiedBearer | undefined;
}

/**
 * Builds the verifier: jose `jwtVerify` with the configured keys only (the key lookup reads `kid`
 * and `alg`, never `jwk`/`x5c`), the algorithm allow-list, `iss`, `aud` (string or array holding
 * the service), a required `exp` and `exp`/`nbf` leeway. Successes are cached until `exp` plus
 * the leeway; failures are not cached.
 *
 * @throws {InvalidBearerToken} for any token that does not verify.
 * @throws {KeySourceUnavailable} when a remote JWKS cannot be fetched.
 */
export function createBearerTokenVerifier(options: ResolvedBearerVerification): BearerTokenVerifier {
  const cache = options.cacheMaxEntries > 0 ? new TokenCache(options.cacheMaxEntries) : undefined;
  const base: JWTVerifyOptions = {
    issuer: options.issuer,
    audience: options.service,
    algorithms: options.algorithms,
    clockTolerance: options.clockTolerance,
    requiredClaims: ['exp'],
  };

  async function verifySignature(token: string, now: number): Promise<JWTPayload> {
    const verifyOptions = { ...base, currentDate: new Date(now) };
    try {
      return (await jwtVerify(token, options.getKey, verifyOptions)).payload;
    } catch (err) {
      if (err instanceof KeySourceUnavailable) throw err;
      // Several keys share the token's kid/alg (e.g. a kid-less token and a bundle of two EC
      // keys): jose hands them back as an async iterable; the first that verifies wins.
      if ((err as { code?: string }).code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') {
        for await (const key of err as AsyncIterable<CryptoKey>) {
          try {
            return (await jwtVerify(token, key, verifyOptions)).payload;
          } catch (inner) {
            if ((inner as { code?: string }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw new InvalidBearerToken('token rejected', { cause: inner });
          }
        }
      }
      throw new InvalidBearerToken('token rejected', { cause: err });
    }
  }

  const verify = async (token: string): Promise<VerifiedBearer> => {
    const now = options.now();
    const cached = cache?.get(token, now);
    if (cached) return cached;
    const bearer = bearerFrom(await verifySignature(token, now));
    cache?.set(token, bearer, bearer.expiresAt.getTime() + options.clockTolerance * 1000);
    return bearer;
  };
  return Object.assign(verify, { cached: (token: string) => cache?.get(token, options.now()) });
}
