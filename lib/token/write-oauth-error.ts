import type { Response } from 'express';
import { OAuthError } from './oauth-error.js';

const REGISTRY_CODE: Record<number, string> = { 401: 'UNAUTHORIZED', 403: 'DENIED', 429: 'TOOMANYREQUESTS', 503: 'UNAVAILABLE' };

/**
 * The one writer of token-endpoint errors. The body is RFC 6749 §5.2 JSON (`error`,
 * `error_description`) and also what Docker's registry client decodes — `details` (read first,
 * for 401 and 429) and `errors[]` — so `docker login` prints the description rather than
 * "unauthorized: " with nothing after it.
 */
export function writeOAuthError(res: Response, err: OAuthError): void {
  res.status(err.status);
  res.set('Cache-Control', 'no-store');
  res.set('Pragma', 'no-cache');
  for (const [name, value] of Object.entries(err.headers)) res.set(name, value);
  res.type('application/json');
  res.send(JSON.stringify({
    error: err.error,
    error_description: err.description,
    details: err.description,
    errors: [{ code: REGISTRY_CODE[err.status] ?? 'UNSUPPORTED', message: err.description }],
  }));
}
