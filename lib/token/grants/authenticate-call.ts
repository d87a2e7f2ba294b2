import { AuthenticatorUnavailableError } from '../authn/authenticator-unavailable-error.js';
import type { AccountStatus, AuthenticationRequest, Authenticator, Identity } from '../authn/types.js';
import type { DockgateMetrics } from '../../metrics/index.js';
import { OAuthError } from '../oauth-error.js';

/**
 * Runs the authenticator; an {@link AuthenticatorUnavailableError} (directory or issuer out of
 * reach) becomes 503 `temporarily_unavailable` with its Retry-After, as a refresh-token store
 * outage does (store-call.ts), keeping the cause for the server log. Any other throw stays a 500.
 */
export async function callAuthenticator(authenticate: Authenticator, request: AuthenticationRequest): Promise<Identity | null | undefined> {
  try {
    return await authenticate(request);
  } catch (cause) {
    throw unavailable(cause);
  }
}

/**
 * Asks Authenticator.lookup about a refresh token's account, with the same mapping: a directory
 * out of reach is 503 (the token is neither honoured nor revoked), anything else a 500.
 */
export async function callAccountLookup(
  lookup: NonNullable<Authenticator['lookup']>, subject: string, metrics?: DockgateMetrics,
): Promise<AccountStatus | undefined> {
  try {
    return await lookup(subject);
  } catch (cause) {
    metrics?.backendFailures.inc({ backend: 'authenticator' });
    throw unavailable(cause);
  }
}

function unavailable(cause: unknown): unknown {
  if (!(cause instanceof AuthenticatorUnavailableError)) return cause;
  return new OAuthError('temporarily_unavailable', 'the token service cannot reach its user directory or identity provider; retry later', {
    headers: { 'Retry-After': String(cause.retryAfter) },
    cause,
  });
}
