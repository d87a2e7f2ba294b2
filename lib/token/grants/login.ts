import type { Request } from 'express';
import type { AuthenticationRequest, Identity } from '../authn/types.js';
import type { AuditEvent } from '../audit.js';
import { OAuthError } from '../oauth-error.js';
import { callAuthenticator } from './authenticate-call.js';
import type { ResolvedTokenOptions } from '../token-options.js';
import { AuthenticatorResultError } from '../authn/authenticator-result-error.js';

/** One password login attempt, from the POST password grant or GET with Basic credentials. */
export interface LoginAttempt {
  grant: 'password' | 'basic';
  username: string;
  password: string;
  service: string;
  clientId: string;
  ip: string;
  /** The HTTP request, for the per-request logger; never read for credentials. */
  req?: Request;
}

export const BAD_CREDENTIALS = 'invalid username or password';

/**
 * Checks credentials behind the brute-force throttle (RFC 6749 §4.3.2). A throttled caller gets
 * 429 with Retry-After before its password is even looked at, and the verdict is checked again
 * against the counts after it, so a parallel burst of guesses cannot outrun the limit. Wrong credentials are
 * `invalid_grant` (400) on the POST grant, as RFC 6749 §5.2 says, and 401 with a Basic challenge
 * when they came in an Authorization header, as the GET token protocol and RFC 6749 §5.2 require.
 */
export async function login(options: ResolvedTokenOptions, attempt: LoginAttempt): Promise<Identity> {
  const audit = (type: AuditEvent['type'], reason: string, error: AuditEvent['error']) => options.audit?.({
    type, grant: attempt.grant, account: attempt.username, service: attempt.service, clientId: attempt.clientId, ip: attempt.ip, reason, error,
  }, attempt.req);
  const throttled = (wait: number) => {
    const reason = 'too many failed logins; retry later';
    audit('login.throttled', reason, 'slow_down');
    return new OAuthError('slow_down', reason, { headers: { 'Retry-After': String(wait) } });
  };
  const request = {
    username: attempt.username,
    password: attempt.password,
    service: attempt.service,
    clientId: attempt.clientId,
    ip: attempt.ip,
  };
  // Counted under what the authenticator says identifies the account (an ID token's issuer and
  // subject), else under the user name.
  const account = throttleAccount(options, request);
  const wait = (await options.throttle?.check(account, attempt.ip)) ?? 0;
  if (wait > 0) throw throttled(wait);
  if (!options.authenticate) {
    throw new OAuthError('invalid_request', 'this token service accepts no credentials');
  }
  let identity: Identity | null | undefined;
  try {
    identity = await callAuthenticator(options.authenticate, request);
  } catch (err) {
    options.metrics?.backendFailures.inc({ backend: 'authenticator' });
    throw err;
  }
  // Credentials that expire within the second (an ID token accepted within the clock leeway)
  // could only mint an access token that is born expired: they are refused like wrong ones.
  if (!identity || (identity.expiresAt !== undefined && identity.expiresAt.getTime() < Date.now() + 1000)) {
    // A guess past the limit (one of a parallel burst) is answered like the ones after it.
    const over = (await options.throttle?.failed(account, attempt.ip)) ?? 0;
    if (over > 0) throw throttled(over);
    audit('login.failed', BAD_CREDENTIALS, attempt.grant === 'basic' ? 'invalid_client' : 'invalid_grant');
    if (attempt.grant === 'basic') {
      throw new OAuthError('invalid_client', BAD_CREDENTIALS, { headers: { 'WWW-Authenticate': options.basicChallenge } });
    }
    throw new OAuthError('invalid_grant', BAD_CREDENTIALS);
  }
  if (typeof identity.subject !== 'string' || identity.subject.length === 0) {
    const cause = new AuthenticatorResultError('authenticate() resolved to an identity without a subject (a non-empty string)');
    throw new OAuthError('server_error', 'the token service failed; retry later', { cause });
  }
  const late = (await options.throttle?.succeeded(account, attempt.ip)) ?? 0;
  if (late > 0) throw throttled(late);
  return identity;
}

function throttleAccount(options: ResolvedTokenOptions, request: AuthenticationRequest): string {
  if (!options.throttle) return request.username;
  let key: string | undefined;
  try {
    key = options.authenticate?.throttleKey?.(request);
  } catch (err) {
    // A hook that throws must not make logins unthrottled or failing: count under the name.
    options.onError(err);
  }
  return typeof key === 'string' && key.length > 0 ? key : request.username;
}
