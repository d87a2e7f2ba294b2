import { DockgateError } from '../errors/dockgate-error.js';

/** RFC 6749 §5.2 error codes, plus the extensions the token endpoint uses. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'server_error'
  /** RFC 6749 §4.1.2.1 code, used with 503 when the refresh-token store is unreachable. */
  | 'temporarily_unavailable'
  /** RFC 7009 §2.2.1: the server does not revoke this type of token. */
  | 'unsupported_token_type'
  /** RFC 8628 §3.5 code ("slow down"), used with 429 when failed logins are throttled. */
  | 'slow_down';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  server_error: 500,
  temporarily_unavailable: 503,
  slow_down: 429,
  unsupported_token_type: 400,
};

/**
 * An error of the token endpoint. `description` is sent to the client, so it never holds a
 * secret; `status` defaults to the RFC status of `error`.
 */
export class OAuthError extends DockgateError {
  static override code = 'ERR_OAUTH';
  override readonly code = 'ERR_OAUTH';
  readonly error: OAuthErrorCode;
  readonly status: number;
  readonly description: string;
  /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
  readonly headers: Record<string, string>;

  constructor(error: OAuthErrorCode, description: string, options: { status?: number; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(description, { cause: options.cause });
    this.error = error;
    this.description = description;
    this.status = options.status ?? STATUS[error];
    this.headers = options.headers ?? {};
  }
}
