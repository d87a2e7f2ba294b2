import { DockgateError } from '../../errors/dockgate-error.js';

/** listenEngine cannot take its socket path: something else is there, or a live server holds it. */
export class EngineListenError extends DockgateError {
  static override code = 'ERR_ENGINE_LISTEN';
  override readonly code = 'ERR_ENGINE_LISTEN';
}
