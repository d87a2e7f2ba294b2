import { DockgateError } from '../errors/dockgate-error.js';

/** A configured key or certificate cannot be used (wrong type, too small, not matching). */
export class KeyConfigurationError extends DockgateError {
  static override code = 'ERR_KEY_CONFIGURATION';
  override readonly code = 'ERR_KEY_CONFIGURATION';
}
