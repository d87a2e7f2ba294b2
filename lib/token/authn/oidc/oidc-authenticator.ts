import { decodeJwt, errors, jwtVerify } from 'jose';
import { AuthenticatorUnavailableError } from '../authenticator-unavailable-error.js';
import type { Authenticator, Identity } from '../types.js';
import { IssuerKeys } from './oidc-issuer-keys.js';
import { resolveOidcOptions, type OidcAuthenticatorOptions, type OidcClaims } from './oidc-options.js';

/** jose error codes that mean "this token is not acceptable", as opposed to "the keys could not be had". */
const TOKEN_REFUSALS = new Set([
  'ERR_JWT_EXPIRED', 'ERR_JWT_CLAIM_VALIDATION_FAILED', 'ERR_JWT_INVALID', 'ERR_JWS_INVALID',
  'ERR_JWS_SIGNATURE_VERIFICATION_FAILED', 'ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS',
  'ERR_JOSE_ALG_NOT_ALLOWED', 'ERR_JOSE_NOT_SUPPORTED',
]);

/**
 * An {@link Authenticator} for workload identity: a CI job (GitHub Actions, GitLab CI, a
 * Kubernetes service account) logs in with the fixed user name `oidc` and its short-lived OpenID
 * Connect ID token as the password — `docker login -u oidc --password-stdin` unchanged, in the
 * password grant and in Basic credentials on GET — so no registry password is stored in CI.
 *
 * The token must be signed by a configured issuer's key (found through its
 * `/.well-known/openid-configuration` → `jwks_uri`, cached by jose, refetched on rotation) with
 * an allowed asymmetric algorithm, carry that issuer's `iss`, a configured `aud`, and an `exp`,
 * `nbf`/`iat` within `clockToleranceSeconds`. The subject and labels come from its claims, so an
 * ACL can say "tokens of repository acme/app on refs/heads/main may push to acme/app":
 * `{ match: { labels: { repository: 'acme/app', ref: 'refs/heads/main' }, name: 'acme/app' }, actions: ['pull', 'push'] }`.
 *
 * The identity carries the token's `exp` (Identity.expiresAt): access tokens end no later, and
 * no refresh token is issued — `docker login` asks for one (`offline_token=true`) and gets the
 * access token only, so the CLI keeps the ID token as its password and nothing it holds outlives
 * the CI job.
 *
 * The login throttle counts an ID token's failures under its issuer and subject claim
 * (`throttleKey`: `oidc <iss> <sub>`, read without verification, as a typed user name is), not
 * under the shared user name `oidc`, so one job's burst of expired tokens does not lock out
 * every other pipeline behind the same address.
 *
 * Another user name, a password that is not a JWT, or an `iss` of no configured issuer resolve to
 * undefined ("not mine", see {@link chainAuthenticators}); a token of a configured issuer that
 * fails a check resolves to null. An issuer whose discovery document or keys cannot be fetched
 * throws an {@link AuthenticatorUnavailableError} (503 with Retry-After).
 *
 * @throws {TypeError} at construction, naming a bad option.
 * @example
 * const authenticate = oidcAuthenticator({
 *   issuers: [{
 *     issuer: 'https://token.actions.githubusercontent.com', audience: 'registry.example.com',
 *     account: 'repository_owner', labels: { repository: 'repository', ref: 'ref', environment: 'environment' },
 *   }],
 * });
 */
export function oidcAuthenticator(options: OidcAuthenticatorOptions): Authenticator {
  const resolved = resolveOidcOptions(options);
  const keys = new Map([...resolved.issuers.keys()].map((iss) => [iss, new IssuerKeys(resolved.issuers.get(iss)!, resolved)]));

  const oidc: Authenticator = async ({ username, password }): Promise<Identity | null | undefined> => {
    if (username !== resolved.username || typeof password !== 'string') return undefined;
    let iss: unknown;
    try {
      iss = decodeJwt(password).iss;
    } catch {
      return undefined;
    }
    const issuer = typeof iss === 'string' ? resolved.issuers.get(iss) : undefined;
    if (!issuer) return undefined;
    const getKey = await keys.get(issuer.issuer)!.resolver();
    let claims: OidcClaims;
    try {
      ({ payload: claims } = await jwtVerify(password, getKey, {
        issuer: issuer.issuer,
        audience: issuer.audience,
        algorithms: issuer.algorithms,
        clockTolerance: resolved.clockTolerance,
        requiredClaims: ['exp', 'iat'],
      }));
    } catch (err) {
      if (err instanceof errors.JOSEError && TOKEN_REFUSALS.has(err.code)) return null;
      throw new AuthenticatorUnavailableError(
        `OIDC issuer ${issuer.issuer}: its keys cannot be fetched (${(err as Error)?.message ?? String(err)})`,
        { retryAfter: resolved.retryAfter, cause: err },
      );
    }
    const subject = issuer.account(claims);
    if (typeof subject !== 'string' || subject.length === 0) return null;
    const labels = Object.fromEntries(Object.entries(issuer.labels(claims)).filter(([, values]) => Array.isArray(values) && values.length > 0));
    return {
      subject,
      ...(Object.keys(labels).length > 0 ? { labels } : {}),
      expiresAt: new Date((claims.exp as number) * 1000),
    };
  };
  oidc.throttleKey = ({ username, password }) => {
    if (username !== resolved.username || typeof password !== 'string') return undefined;
    let claims: OidcClaims;
    try {
      claims = decodeJwt(password) as OidcClaims;
    } catch {
      return undefined;
    }
    const issuer = typeof claims.iss === 'string' ? resolved.issuers.get(claims.iss) : undefined;
    if (!issuer) return undefined;
    const subject = claims[issuer.subjectClaim];
    // NUL separates: neither an issuer URL nor a claim value the throttle keys on holds one in practice, and a forged one only splits its own window.
    return `oidc\u0000${issuer.issuer}\u0000${typeof subject === 'string' ? subject : ''}`;
  };
  return oidc;
}
