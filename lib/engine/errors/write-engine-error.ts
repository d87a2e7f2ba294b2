import type { Response } from 'express';
import { apiVersionLessThan } from '../../engine-api/api-version.js';
import { EngineError } from '../../engine-api/engine-error.js';

/**
 * The one writer of engine errors. JSON `{"message": …}` with Content-Type exactly
 * `application/json`: the Go client decodes the body only on that exact string (client/request.go
 * checkResponseErr). For requests at API ≤ 1.23 dockerd answers in plain text (httputils
 * MakeErrorHandler; checked against dockerd 20.10), and so do we. 304 carries no body.
 * Anything that is not an EngineError is answered as a 500 without its details.
 *
 * @param requestedVersion - the version from the request path, if any (even a rejected one:
 * "/v1.11/…" gets its "too old" message in plain text, as from dockerd).
 * @example
 * writeEngineError(res, EngineError.notFound('No such container: x'), '1.28');
 */
export function writeEngineError(res: Response, error: unknown, requestedVersion?: string): void {
  const engineError = error instanceof EngineError ? error : EngineError.system('internal server error');
  if (res.headersSent) {
    // The status line is gone: the only honest signal left is cutting the stream.
    res.destroy(engineError);
    return;
  }
  res.status(engineError.status);
  if (engineError.status === 304) {
    res.end();
    return;
  }
  if (requestedVersion !== undefined && requestedVersion !== '' && apiVersionLessThan(requestedVersion, '1.24')) {
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(`${engineError.message}\n`);
    return;
  }
  writeEngineJson(res, { message: engineError.message });
}

/**
 * Writes a JSON value the way dockerd's WriteJSON does: exact `application/json` and a
 * trailing newline. Used for every JSON answer so the Content-Type never drifts.
 *
 * @example
 * writeEngineJson(res.status(201), { Id: id, Warnings: null });
 */
export function writeEngineJson(res: Response, value: unknown): void {
  const body = `${JSON.stringify(value)}\n`;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
