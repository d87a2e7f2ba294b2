import { DockgateError } from '../../errors/dockgate-error.js';

/**
 * An htpasswd table cannot be used: a line is not `user:hash`, names a user twice, or holds a
 * password scheme other than bcrypt. The message names the line number and the user but never
 * the hash or the line's text (a malformed line may well be a pasted password).
 *
 * @example
 * try { htpasswdAuthenticator({ content: 'bob:{SHA}…' }); }
 * catch (err) { if (err instanceof HtpasswdFormatError) console.error(err.message, err.line); }
 */
export class HtpasswdFormatError extends DockgateError {
  static override code = 'ERR_HTPASSWD_FORMAT';
  override readonly code = 'ERR_HTPASSWD_FORMAT';
  /** 1-based line number of the offending line. */
  readonly line: number;

  constructor(message: string, line: number) {
    super(message);
    this.line = line;
  }
}
