import { DockgateError } from '../../errors/dockgate-error.js';

/**
 * An authenticator could not reach what it checks credentials against (a directory that is down
 * or too slow, an OIDC issuer whose keys cannot be fetched). The token router answers
 * `503 temporarily_unavailable` with `Retry-After: retryAfter`, never "invalid password": a
 * right password must not look wrong, and a client told to retry does not count as a failed
 * login. The message is for the server log (it never holds a password or a token); `cause`
 * keeps the underlying error.
 *
 * @example
 * throw new AuthenticatorUnavailableError('LDAP server ldap://dir:389 did not answer within 3000 ms', { retryAfter: 5, cause: err });
 */
export class AuthenticatorUnavailableError extends DockgateError {
  static override code = 'ERR_AUTHENTICATOR_UNAVAILABLE';
  override readonly code = 'ERR_AUTHENTICATOR_UNAVAILABLE';
  /** Seconds the client is told to wait (`Retry-After`). */
  readonly retryAfter: number;

  constructor(message: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.retryAfter = options.retryAfter ?? 5;
  }
}
