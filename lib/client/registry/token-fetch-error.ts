import { DockgateError } from '../../errors/dockgate-error.js';

/**
 * A token could not be obtained from an authorization server. The message never holds a
 * password or token; `status` and `oauthError` say what the server answered, when it answered.
 *
 * @example
 * try { await client.token(challenge); } catch (err) {
 *   if (err instanceof TokenFetchError && err.oauthError === 'invalid_grant') askForCredentialsAgain();
 * }
 */
export class TokenFetchError extends DockgateError {
  static override code = 'ERR_TOKEN_FETCH';
  override readonly code = 'ERR_TOKEN_FETCH';
  readonly status: number | undefined;
  /** The OAuth `error` code of the answer (`invalid_grant`…), when it had one. */
  readonly oauthError: string | undefined;

  constructor(message: string, options: { status?: number; oauthError?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
    this.oauthError = options.oauthError;
  }
}
