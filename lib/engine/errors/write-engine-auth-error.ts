import type { Response } from 'express';
import type { RegistryError } from '../../bearer/errors/registry-error.js';
import { EngineError } from '../../engine-api/engine-error.js';
import { writeEngineError } from './write-engine-error.js';

/**
 * Writes a bearer-check failure in the engine API's own shape: the same status and
 * `WWW-Authenticate` challenge, with a `{"message": …}` body, which the Docker CLI prints
 * ("Error response from daemon: authentication required") where a registry `{"errors":[…]}`
 * body would leave it with "provided no error-message".
 *
 * @example
 * const guard = bearerGuard({ realm, keys: tokens, writeError: writeEngineAuthError });
 * app.use('/engine', guard('engine:api:read'), engineRouter(runtime));
 */
export function writeEngineAuthError(res: Response, err: RegistryError): void {
  if (err.challenge !== undefined) res.setHeader('WWW-Authenticate', err.challenge);
  if (err.retryAfter !== undefined) res.setHeader('Retry-After', String(err.retryAfter));
  writeEngineError(res, EngineError.fromStatus(err.status, err.message));
}
