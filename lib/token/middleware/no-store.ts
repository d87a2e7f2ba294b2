import type { RequestHandler } from 'express';

/** RFC 6749 §5.1: every token-endpoint answer, errors included, must not be cached. */
export const noStore: RequestHandler = (_req, res, next) => {
  res.set('Cache-Control', 'no-store');
  res.set('Pragma', 'no-cache');
  next();
};
