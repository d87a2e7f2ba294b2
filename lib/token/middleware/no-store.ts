import type { RequestHandler, Response } from 'express';

/**
 * RFC 6749 §5.1: every token-endpoint answer, errors included, must not be cached. Set with
 * Node's own `setHeader`: Express's `res.set` costs a charset and array check per header.
 */
export function setNoStore(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
}

/** {@link setNoStore} as a middleware, for routes answered by Express itself (405). */
export const noStore: RequestHandler = (_req, res, next) => {
  setNoStore(res);
  next();
};
