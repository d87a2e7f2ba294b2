import type { NextFunction, Request, Response } from 'express';
import type { ContainerRuntime } from '../../engine-api/runtime-types.js';
import type { VersionRange } from '../../engine-api/version-range.js';
import type { EngineSettings } from './options.js';
import { gateApiVersion } from './version-gate.js';
import { writeEngineError } from '../errors/write-engine-error.js';
import { EngineError } from '../../engine-api/engine-error.js';

/** What every route of one router shares. */
export interface EngineContext {
  runtime: ContainerRuntime;
  range: VersionRange;
  settings: EngineSettings;
}

/** Per-request engine state, kept in `res.locals.engine`. */
export interface EngineLocals {
  /** Version from the path (`/v1.28/…`), possibly out of range; undefined without a prefix. */
  requested?: string;
  /** The version the request is served at, once the gate let it through. */
  version: string;
}

export function engineLocals(res: Response): EngineLocals {
  return (res.locals.engine ??= { version: '' }) as EngineLocals;
}

/** A route handler: throws EngineError (or returns a rejected promise) for the writer to answer. */
export type EngineHandler = (req: Request, res: Response, version: string) => Promise<void> | void;

/**
 * Wraps a handler with the version gate and the error writer. The gate runs only for routes
 * that exist, so an unknown path answers 404 `page not found` whatever its version, as dockerd.
 */
export function engineRoute(ctx: EngineContext, handler: EngineHandler) {
  return async (req: Request, res: Response, _next: NextFunction): Promise<void> => {
    const locals = engineLocals(res);
    try {
      locals.version = gateApiVersion(locals.requested, ctx.range);
      await handler(req, res, locals.version);
    } catch (error) {
      if (!(error instanceof EngineError) || error.status >= 500) ctx.settings.onError?.(error, req);
      writeEngineError(res, error, locals.requested);
    }
  };
}
