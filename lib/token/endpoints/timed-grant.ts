import type { Request, RequestHandler, Response } from 'express';
import type { ResolvedTokenOptions } from '../token-options.js';

/**
 * A token endpoint's handler, timed into the grant-duration histogram (with `result` ok or
 * refused) when metrics are on; without metrics the grant itself is the handler, so an
 * unobserved service pays for no clock read.
 */
export function timedGrant(
  options: ResolvedTokenOptions,
  grantLabel: (req: Request) => string,
  grant: (req: Request, res: Response) => Promise<void>,
): RequestHandler {
  const metrics = options.metrics;
  if (!metrics) return grant;
  return async (req: Request, res: Response) => {
    const started = performance.now();
    let result = 'refused';
    try {
      await grant(req, res);
      result = 'ok';
    } finally {
      metrics.grantDuration.observe({ grant_type: grantLabel(req), result }, (performance.now() - started) / 1000);
    }
  };
}
