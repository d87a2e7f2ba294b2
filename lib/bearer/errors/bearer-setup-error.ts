import { DockgateError } from '../../errors/dockgate-error.js';

/**
 * `requireBearer(scope)` found no tokenRouter to take its keys and realm from, or several, or
 * one whose realm it cannot name. Known only at the first request (the app is assembled by
 * then), so it is reported to the token service's `onError` (or stderr) and each request is
 * answered 500 in the registry's error shape.
 */
export class BearerSetupError extends DockgateError {
  static override code = 'ERR_BEARER_SETUP';
  override readonly code = 'ERR_BEARER_SETUP';
}
