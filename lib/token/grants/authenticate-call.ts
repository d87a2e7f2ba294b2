import { AuthenticatorUnavailableError } from '../authn/authenticator-unavailable-error.js';
import type { AuthenticationRequest, Authenticator, Identity } from '../authn/types.js';
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
    if (!(cause instanceof AuthenticatorUnavailableError)) throw cause;
    throw new OAuthError('temporarily_unavailable', 'the token service cannot reach its user directory or identity provider; retry later', {
      headers: { 'Retry-After': String(cause.retryAfter) },
      cause,
    });
  }
}
