import { DockgateError } from '../errors/dockgate-error.js';

/** A scope string does not follow the distribution scope grammar. */
export class ScopeSyntaxError extends DockgateError {
  static override code = 'ERR_SCOPE_SYNTAX';
  override readonly code = 'ERR_SCOPE_SYNTAX';
}
