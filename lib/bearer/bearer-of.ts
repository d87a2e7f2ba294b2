import type { Request } from 'express';
import type { VerifiedBearer } from './verify/verified-bearer.js';

declare global {
  // Declaration merging: Express's own typings declare `Express.Request` for this purpose.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The verified bearer token, set by `requireBearer` before the handler runs. */
      bearer?: VerifiedBearer;
    }
  }
}

/**
 * The verified bearer of a request that went through `requireBearer`, typed without `undefined`.
 *
 * @example
 * app.get('/v2/:ns/:repo/tags/list', guard((req) => `repository:${req.params.ns}/${req.params.repo}:pull`), (req, res) => {
 *   res.json({ name: `${req.params.ns}/${req.params.repo}`, tags: tagsFor(bearerOf(req).subject) });
 * });
 * @throws {TypeError} when `requireBearer` did not run for this request (a routing mistake).
 */
export function bearerOf(req: Request): VerifiedBearer {
  if (!req.bearer) throw new TypeError('bearerOf(req): requireBearer did not run for this request');
  return req.bearer;
}
