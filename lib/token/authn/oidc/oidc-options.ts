import type { JWTPayload } from 'jose';
import { isLoopbackHost } from '../../../http/loopback.js';
import { integerOption, nonEmptyString } from '../../../options/option-checks.js';

/** The verified claims of an ID token. */
export type OidcClaims = JWTPayload & Record<string, unknown>;

/** One trusted issuer: who may sign, for whom, and how its claims map to an identity. */
export interface OidcIssuerOptions {
  /**
   * The exact `iss`, e.g. `https://token.actions.githubusercontent.com`; its keys are found through
   * `/.well-known/openid-configuration`. `https://`, or `http://` on a loopback host only. Required.
   */
  issuer: string;
  /** Accepted `aud` value(s): what the CI job asks its token for (GitHub: `core.getIDToken(audience)`). Required. */
  audience: string | readonly string[];
  /**
   * The identity's subject: a claim name, or a function of the verified claims (return undefined
   * to refuse the token). Defaults to `sub`.
   */
  account?: string | ((claims: OidcClaims) => string | undefined);
  /**
   * Labels: label name → claim name (a string claim gives one value, a list of strings several),
   * or a function of the claims. Defaults to none. For GitHub Actions e.g.
   * `{ repository: 'repository', ref: 'ref', environment: 'environment' }`.
   */
  labels?: Record<string, string> | ((claims: OidcClaims) => Record<string, string[]>);
  /** Accepted signature algorithms, asymmetric only. Defaults to RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA, Ed25519. */
  algorithms?: readonly string[];
  /** The JWKS URL, skipping discovery (`https://`, or `http://` on a loopback host). Defaults to the discovery document's `jwks_uri`. */
  jwksUri?: string;
}

/** Options of {@link oidcAuthenticator}. */
export interface OidcAuthenticatorOptions {
  /** The trusted issuers; a token whose `iss` is none of them is not this authenticator's (undefined). Required, at least one. */
  issuers: readonly OidcIssuerOptions[];
  /** The user name that says "the password is an ID token" (`docker login -u oidc`). Defaults to `oidc`. */
  username?: string;
  /**
   * Seconds of clock skew tolerated on `nbf`, `iat` and `exp`. An access token still never outlives
   * the ID token on this server's clock: a token accepted only thanks to the leeway on `exp` is
   * refused, since it could only mint an access token that is born expired. Defaults to 30.
   */
  clockToleranceSeconds?: number;
  /** Milliseconds for fetching the discovery document or the JWKS. Defaults to 5000. */
  timeoutMs?: number;
  /** Seconds the issuer's keys are cached before they are fetched again. Defaults to 600. */
  jwksCacheMaxAgeSeconds?: number;
  /**
   * Seconds after a fetch during which a token with an unknown `kid` does not trigger another
   * one (jose's cooldown), so forged `kid`s cannot make this server hammer the issuer. A key
   * rotation is picked up by the first token after it. Defaults to 30.
   */
  jwksCooldownSeconds?: number;
  /** Seconds in `Retry-After` when an issuer is unreachable. Defaults to 5. */
  retryAfter?: number;
}

export const DEFAULT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

/** One issuer after validation. */
export interface ResolvedIssuer {
  issuer: string;
  audience: string[];
  account: (claims: OidcClaims) => string | undefined;
  /** The claim the throttle keys on: `account` when it names a claim, else `sub`. */
  subjectClaim: string;
  labels: (claims: OidcClaims) => Record<string, string[]>;
  algorithms: string[];
  jwksUri?: URL;
}

export interface ResolvedOidcOptions {
  issuers: Map<string, ResolvedIssuer>;
  username: string;
  clockTolerance: number;
  timeoutMs: number;
  cacheMaxAgeMs: number;
  cooldownMs: number;
  retryAfter: number;
}

function httpUrl(value: string, name: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`"${name}" must be an http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`"${name}" must be an http(s) URL`);
  // Over plain HTTP anyone on the path could hand out the keys that make ID tokens valid.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new TypeError(`"${name}" must be an https:// URL; http:// is accepted only for a loopback host (127.0.0.1, ::1, localhost)`);
  }
  return url;
}

/** A claim's values as label values: a string is one, a list of strings several; other types none. */
export function claimValues(value: unknown): string[] {
  if (typeof value === 'string') return value.length > 0 ? [value] : [];
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v.length > 0);
  return [];
}

function resolveIssuer(options: OidcIssuerOptions, at: string): ResolvedIssuer {
  if (typeof options !== 'object' || options === null) throw new TypeError(`"${at}" must be an object with "issuer" and "audience"`);
  const issuer = nonEmptyString(options.issuer, `${at}.issuer`);
  httpUrl(issuer, `${at}.issuer`);
  const audience = typeof options.audience === 'string' ? [options.audience] : options.audience;
  if (!Array.isArray(audience) || audience.length === 0) throw new TypeError(`"${at}.audience" must be a non-empty string or list: the aud your CI jobs request`);
  audience.forEach((a, i) => nonEmptyString(a, `${at}.audience[${i}]`));
  const account = options.account ?? 'sub';
  let accountOf: ResolvedIssuer['account'];
  let subjectClaim = 'sub';
  if (typeof account === 'function') accountOf = account;
  else {
    const claim = nonEmptyString(account, `${at}.account`);
    subjectClaim = claim;
    accountOf = (claims) => (typeof claims[claim] === 'string' && claims[claim] !== '' ? (claims[claim] as string) : undefined);
  }
  const labels = options.labels ?? {};
  let labelsOf: ResolvedIssuer['labels'];
  if (typeof labels === 'function') labelsOf = labels;
  else {
    if (typeof labels !== 'object' || labels === null) throw new TypeError(`"${at}.labels" must be an object of label → claim, or a function`);
    const pairs = Object.entries(labels).map(([label, claim]) => [nonEmptyString(label, `${at}.labels key`), nonEmptyString(claim, `${at}.labels.${label}`)] as const);
    labelsOf = (claims) => Object.fromEntries(pairs.map(([label, claim]) => [label, Object.hasOwn(claims, claim) ? claimValues(claims[claim]) : []]));
  }
  const algorithms = [...(options.algorithms ?? DEFAULT_ALGORITHMS)];
  if (algorithms.length === 0) throw new TypeError(`"${at}.algorithms" must not be empty`);
  for (const alg of algorithms) {
    if (!(DEFAULT_ALGORITHMS as readonly string[]).includes(alg)) {
      // HS*: the "key" would be a shared secret, not the issuer's public JWKS; none: no signature.
      throw new TypeError(`"${at}.algorithms" holds "${alg}"; only asymmetric algorithms are accepted (${DEFAULT_ALGORITHMS.join(', ')})`);
    }
  }
  const resolved: ResolvedIssuer = { issuer, audience: [...audience], account: accountOf, subjectClaim, labels: labelsOf, algorithms };
  if (options.jwksUri !== undefined) resolved.jwksUri = httpUrl(nonEmptyString(options.jwksUri, `${at}.jwksUri`), `${at}.jwksUri`);
  return resolved;
}

/**
 * Validates {@link OidcAuthenticatorOptions} once, at construction.
 *
 * @throws {TypeError} naming the option.
 */
export function resolveOidcOptions(options: OidcAuthenticatorOptions): ResolvedOidcOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('oidcAuthenticator options must be an object');
  if (!Array.isArray(options.issuers) || options.issuers.length === 0) throw new TypeError('"issuers" must be a non-empty list of { issuer, audience }');
  const issuers = new Map<string, ResolvedIssuer>();
  options.issuers.forEach((entry, i) => {
    const resolved = resolveIssuer(entry, `issuers[${i}]`);
    if (issuers.has(resolved.issuer)) throw new TypeError(`"issuers[${i}].issuer" repeats ${resolved.issuer}`);
    issuers.set(resolved.issuer, resolved);
  });
  const username = nonEmptyString(options.username ?? 'oidc', 'username');
  if (username.includes(':')) throw new TypeError('"username" must not contain ":" (Basic credentials split there)');
  return {
    issuers,
    username,
    clockTolerance: integerOption(options.clockToleranceSeconds ?? 30, 'clockToleranceSeconds', 0),
    timeoutMs: integerOption(options.timeoutMs ?? 5000, 'timeoutMs', 1),
    cacheMaxAgeMs: integerOption(options.jwksCacheMaxAgeSeconds ?? 600, 'jwksCacheMaxAgeSeconds', 1) * 1000,
    cooldownMs: integerOption(options.jwksCooldownSeconds ?? 30, 'jwksCooldownSeconds', 0) * 1000,
    retryAfter: integerOption(options.retryAfter ?? 5, 'retryAfter', 1),
  };
}
