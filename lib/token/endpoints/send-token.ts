import type { Response } from 'express';
import { setNoStore } from '../middleware/no-store.js';

/**
 * Writes a token response: 200, `no-store` (RFC 6749 §5.1), JSON. Written with Node's own
 * calls rather than `res.json`: Express would compute an ETag over a body that must never be
 * cached or revalidated (a conditional GET would even get a 304 for a fresh token).
 */
export function sendToken(res: Response, body: Record<string, unknown>): void {
  setNoStore(res);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(JSON.stringify(body));
}
