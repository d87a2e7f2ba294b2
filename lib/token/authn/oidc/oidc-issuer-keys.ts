import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import { isLoopbackHost } from '../../../http/loopback.js';
import { AuthenticatorUnavailableError } from '../authenticator-unavailable-error.js';
import type { ResolvedIssuer, ResolvedOidcOptions } from './oidc-options.js';

/** OpenID Connect Discovery 1.0 §4: the issuer (no trailing slash) + `/.well-known/openid-configuration`. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

async function discoverJwksUri(issuer: ResolvedIssuer, options: ResolvedOidcOptions): Promise<URL> {
  const url = discoveryUrl(issuer.issuer);
  const unavailable = (why: string, cause?: unknown) =>
    new AuthenticatorUnavailableError(`OIDC issuer ${issuer.issuer}: ${why}`, { retryAfter: options.retryAfter, cause });
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs), redirect: 'error', headers: { accept: 'application/json' } });
  } catch (err) {
    throw unavailable(`${url} cannot be fetched (${(err as Error)?.name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : (err as Error)?.message})`, err);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw unavailable(`${url} answered ${response.status}`);
  }
  let document: { issuer?: unknown; jwks_uri?: unknown };
  try {
    document = (await response.json()) as typeof document;
  } catch (err) {
    throw unavailable(`${url} is not JSON`, err);
  }
  // Discovery §4.3: the document's issuer must be exactly the one asked for.
  if (document?.issuer !== issuer.issuer) throw unavailable(`the discovery document names issuer ${JSON.stringify(document?.issuer)}`);
  if (typeof document.jwks_uri !== 'string') throw unavailable('the discovery document has no jwks_uri');
  try {
    const jwksUri = new URL(document.jwks_uri);
    // As for the issuer itself: keys over plain HTTP only from this machine.
    if (jwksUri.protocol === 'https:' || (jwksUri.protocol === 'http:' && isLoopbackHost(jwksUri.hostname))) return jwksUri;
  } catch {
    // reported below
  }
  throw unavailable('the discovery document\'s jwks_uri is not an https:// URL (or http:// on a loopback host)');
}

/**
 * The signing keys of one issuer: discovery on first use (not at construction, so the token
 * service starts while an issuer is down), then jose's remote JWK set, which caches the keys for
 * `jwksCacheMaxAgeSeconds`, fetches again for an unknown `kid` (a rotation) at most once per
 * cooldown, and times out after `timeoutMs`. A failed discovery is retried by the next login.
 */
export class IssuerKeys {
  readonly #issuer: ResolvedIssuer;
  readonly #options: ResolvedOidcOptions;
  #keys: Promise<JWTVerifyGetKey> | undefined;

  constructor(issuer: ResolvedIssuer, options: ResolvedOidcOptions) {
    this.#issuer = issuer;
    this.#options = options;
  }

  /** The key resolver for jwtVerify; rejects with AuthenticatorUnavailableError when discovery fails. */
  resolver(): Promise<JWTVerifyGetKey> {
    this.#keys ??= (async () => {
      const jwksUri = this.#issuer.jwksUri ?? (await discoverJwksUri(this.#issuer, this.#options));
      return createRemoteJWKSet(jwksUri, {
        timeoutDuration: this.#options.timeoutMs,
        cooldownDuration: this.#options.cooldownMs,
        cacheMaxAge: this.#options.cacheMaxAgeMs,
      });
    })();
    const keys = this.#keys;
    keys.catch(() => {
      if (this.#keys === keys) this.#keys = undefined;
    });
    return keys;
  }
}
