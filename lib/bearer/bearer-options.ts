import type { Response } from 'express';
import type { JSONWebKeySet } from 'jose';
import type { RegistryError } from './errors/registry-error.js';
import type { TokenRouter, TokenService } from '../token/index.js';
import type { MetricsOptions } from '../metrics/index.js';

/** Algorithms `requireBearer` can be told to accept: asymmetric only (never `none`, never HS*). */
export type BearerAlgorithm = 'ES256' | 'ES384' | 'ES512' | 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512';

/** Remote JWKS (another dockgate's `jwksPath`), fetched with jose's `createRemoteJWKSet`. */
export interface RemoteJwksKeys {
  /** Absolute http(s) URL of the JWKS document. */
  jwksUrl: string | URL;
  /** Milliseconds before a JWKS fetch is abandoned. Defaults to 5000. */
  timeoutDuration?: number;
  /** Milliseconds after a fetch during which an unknown `kid` does not trigger another one. Defaults to 30000. */
  cooldownDuration?: number;
  /** Milliseconds a fetched JWKS is trusted before it is fetched again, so rotations are picked up. Defaults to 600000. */
  cacheMaxAge?: number;
}

/**
 * Where verification keys come from. Keys carried in a token (`jwk`, `x5c` headers) are never
 * used: only these.
 * - a {@link TokenRouter} or its {@link TokenService} in the same process: its key ring, issuer and (single) service;
 * - `{ pem }`: PEM public keys and/or certificates (a registry `rootcertbundle`); a token's `kid`
 *   must be the key's libtrust id or RFC 7638 thumbprint, or absent;
 * - `{ jwks }`: a local JWKS document, matched by `kid`;
 * - `{ jwksUrl }`: a remote JWKS, refetched on unknown `kid` and after `cacheMaxAge`.
 */
export type BearerKeys = TokenRouter | TokenService | { pem: string | Buffer } | { jwks: JSONWebKeySet } | RemoteJwksKeys;

/** Verified-token cache settings. */
export interface BearerCacheOptions {
  /** Most tokens kept; the least recently used is dropped first. Defaults to 1000. */
  maxEntries?: number;
}

/** Options of {@link bearerGuard} and {@link requireBearer}. */
export interface BearerOptions {
  /** The token endpoint clients are sent to (the challenge's `realm`): an absolute http(s) URL. Required. */
  realm: string | URL;
  /** Verification keys. Required. */
  keys: BearerKeys;
  /**
   * The service name: the challenge's `service` and the `aud` a token must hold (as a string or
   * in an array). Defaults to the token service's service when `keys` is one that has exactly one.
   */
  service?: string;
  /** The `iss` a token must hold. Defaults to the token service's issuer when `keys` is one. */
  issuer?: string;
  /** Accepted `alg` values. Defaults to ES256, ES384, ES512, RS256, RS384, RS512 (what registry 2.8 accepts). */
  algorithms?: readonly BearerAlgorithm[];
  /** Leeway in seconds for `exp` and `nbf`. Defaults to 60, distribution's `Leeway`. */
  clockTolerance?: number;
  /** Cache of verified tokens (until they expire), or false to verify every request. Defaults to `{ maxEntries: 1000 }`. */
  cache?: BearerCacheOptions | false;
  /**
   * Writes a failure (401 with its challenge, 400 NAME_INVALID, 503). Routes of another protocol
   * pass their own writer, e.g. `writeEngineAuthError` for the engine API, whose clients read
   * `{"message"}`. The writer must send `err.challenge` as WWW-Authenticate. Defaults to
   * `writeRegistryError` (the registry's `{"errors":[…]}` body).
   */
  writeError?: (res: Response, err: RegistryError) => void;
  /** Current time in milliseconds, for simulations and tests. Defaults to `Date.now`. */
  now?: () => number;
  /**
   * Prometheus metrics (prom-client) `{ registry, prefix }`, the same option as tokenRouter's:
   * counts checks by result (`ok`, `missing`, `invalid_token`, `insufficient_scope`,
   * `name_invalid`, `unavailable`). Defaults to none.
   */
  metrics?: MetricsOptions;
}
