import { DockgateError } from '../../errors/dockgate-error.js';

/**
 * The engine client cannot talk to this daemon at any version it accepts (the daemon's minimum
 * API version is above the client's version).
 *
 * @example
 * try { await client.connect(); } catch (e) { if ((e as EngineClientError).code === 'ERR_ENGINE_CLIENT_VERSION') … }
 */
export class EngineClientError extends DockgateError {
  static override code = 'ERR_ENGINE_CLIENT_VERSION';
  override readonly code = 'ERR_ENGINE_CLIENT_VERSION';
}
