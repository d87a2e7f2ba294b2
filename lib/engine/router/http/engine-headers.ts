import type { NextFunction, Request, Response } from 'express';
import type { EngineContext } from './context.js';

/**
 * Headers on every answer, errors and 404s included (dockerd sets them before the version
 * check since moby commit e9dac5e; the Go client reads `Api-Version`, `Ostype` and
 * `Docker-Experimental` from `/_ping`). Go canonicalises names, so `Api-Version`/`Ostype` are the
 * bytes dockerd sends.
 */
export function engineHeaders(ctx: EngineContext) {
  const experimental = String(ctx.settings.experimental);
  return (_req: Request, res: Response, next: NextFunction): void => {
    res.setHeader('Api-Version', ctx.range.max);
    res.setHeader('Server', ctx.settings.serverHeader);
    res.setHeader('Ostype', ctx.settings.os);
    res.setHeader('Docker-Experimental', experimental);
    next();
  };
}
