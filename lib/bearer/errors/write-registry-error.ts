import type { Response } from 'express';
import type { RegistryError } from './registry-error.js';

/**
 * Writes a {@link RegistryError}: status, `WWW-Authenticate` (401) or `Retry-After` (503), and the
 * registry error body. Content-Type is exactly `application/json` — no charset — because the Go
 * clients (docker, containerd) decode an error body only when it is.
 *
 * @example
 * writeRegistryError(res, new RegistryError('NAME_INVALID', 'invalid repository name', { status: 400 }));
 */
export function writeRegistryError(res: Response, err: RegistryError): void {
  const entry: Record<string, unknown> = { code: err.errorCode, message: err.message };
  if (err.detail !== undefined) entry.detail = err.detail;
  const body = JSON.stringify({ errors: [entry] });
  res.status(err.status);
  if (err.challenge !== undefined) res.setHeader('WWW-Authenticate', err.challenge);
  if (err.retryAfter !== undefined) res.setHeader('Retry-After', String(err.retryAfter));
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
