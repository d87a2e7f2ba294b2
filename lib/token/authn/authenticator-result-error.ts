import { DockgateError } from '../../errors/dockgate-error.js';

/**
 * The host's authenticator resolved to an identity dockgate cannot issue a token for (no
 * `subject`). A bug on the server, not the client's fault: the client gets `server_error` and
 * this goes to `onError`, naming what was wrong but nothing of the request.
 */
export class AuthenticatorResultError extends DockgateError {
  static override code = 'ERR_AUTHENTICATOR_RESULT';
  override readonly code = 'ERR_AUTHENTICATOR_RESULT';
}
