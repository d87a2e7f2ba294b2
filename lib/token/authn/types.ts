/**
 * What the token service knows about a caller at authentication time.
 *
 * @example
 * const request: AuthenticationRequest = { username: 'alice', password: 's3cret', service: 'registry.local' };
 */
export interface AuthenticationRequest {
  /** User name from Basic auth or the POST form's `username`. */
  username: string;
  /** Password from Basic auth or the POST form's `password`. Never log it. */
  password: string;
  /** The client's `client_id` parameter (`docker`, `containerd-client`…), when sent. */
  clientId?: string;
  /** Remote address as Express reports it (may be IPv4-mapped IPv6, e.g. `::ffff:127.0.0.1`). */
  ip?: string;
  /** The `service` parameter: which registry the token is for. */
  service: string;
}

/**
 * The verified identity; `subject` becomes the JWT `sub`. Extra labels may be used by authorizers.
 *
 * @example
 * const identity: Identity = { subject: 'alice', labels: { group: ['admins'] } };
 */
export interface Identity {
  /** Account name, written into the JWT `sub` claim and passed to the authorizer as `account`. */
  subject: string;
  /** Free-form attributes (groups, teams…) an ACL can match with `match.labels` or `${labels:key}`. */
  labels?: Record<string, string[]>;
  /**
   * When the credentials themselves expire (an OIDC ID token's `exp`): access tokens issued for
   * this identity expire no later, and it gets no refresh token (`offline_token=true` and
   * `access_type=offline` are answered with an access token only), so nothing issued outlives
   * the credential it came from.
   */
  expiresAt?: Date;
}

/**
 * What an authenticator knows of an account when a refresh token of it is redeemed:
 * `active` (it exists and may log in), `disabled` (it exists and may not; final, as null is for a
 * login) or `unknown` (no such account here; in a chain, the next authenticator is asked).
 */
export type AccountStatus = 'active' | 'disabled' | 'unknown';

/**
 * Host hook: resolve to an Identity when the credentials are right, to null when they are wrong,
 * and to undefined when they are not this authenticator's to judge (an unknown user, an ID token
 * of another issuer): the token router refuses both alike, while {@link chainAuthenticators}
 * asks the next authenticator only after undefined. Throw only for infrastructure failures;
 * throw an {@link AuthenticatorUnavailableError} for one the client should retry (503).
 *
 * Two optional properties make it answer more:
 * - `lookup(subject)`: whether an account still exists and may log in, asked on every refresh
 *   grant. `unknown` or `disabled` refuses the refresh token (`invalid_grant`) and revokes every
 *   refresh token of the subject. Resolving to undefined, or having no `lookup`, means "cannot
 *   tell": the refresh token is honoured until it expires or is revoked through the TokenService.
 * - `throttleKey(request)`: the account the login throttle counts this attempt under, when it is
 *   not the user name (the OIDC authenticator: issuer and subject claim of the ID token).
 *
 * @example
 * const authenticate: Authenticator = async ({ username, password }) =>
 *   username === 'ci' && password === process.env.CI_TOKEN ? { subject: 'ci' } : null;
 * authenticate.lookup = async (subject) => (subject === 'ci' ? 'active' : 'unknown');
 */
export interface Authenticator {
  (request: AuthenticationRequest): Promise<Identity | null | undefined>;
  /** Whether the account of a refresh token may still log in; undefined when this authenticator cannot tell. */
  lookup?: (subject: string) => Promise<AccountStatus | undefined>;
  /** The throttle's account for this attempt; undefined to count it under the user name. Must not throw. */
  throttleKey?: (request: AuthenticationRequest) => string | undefined;
}
