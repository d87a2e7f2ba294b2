import type { NextFunction, Request, Response } from 'express';
import { gateApiVersion } from './version-gate.js';
import { readJsonBody } from './read-json-body.js';
import { writeEngineError } from '../../errors/write-engine-error.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { EngineAction } from '../../policy/engine-actions.js';
import { checkpoint, type CheckpointResult } from './checkpoint.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import { withGoFieldCase } from '../../../engine-api/go-field-case.js';
import type { ExecSpec } from '../../../engine-api/exec-spec.js';
import type { BuildSpec } from '../../../engine-api/build-operations.js';

export type { EngineContext } from './engine-context.js';
import type { EngineContext } from './engine-context.js';

/** Per-request engine state, kept in `res.locals.engine`. */
export interface EngineLocals {
  /** Version from the path (`/v1.28/…`), possibly out of range; undefined without a prefix. */
  requested?: string;
  /** The version the request is served at, once the gate let it through. */
  version: string;
  /** What the policy checkpoint found (caller, narrowing, the body it read); undefined without a policy. */
  policy?: CheckpointResult;
  /** `container.create`: the body decoded once (the route's decoder), with the references the checkpoint pinned. */
  spec?: ContainerSpec;
  /** `exec.create`: the body decoded once (the route's decoder). */
  execSpec?: ExecSpec;
  /** `image.build`: the query decoded once (the route's decoder). */
  buildSpec?: BuildSpec;
}

/** A route's body decoder: its body decoded once, before the checkpoint, for the policy and the route alike. */
export type SpecDecoder =
  | { readonly container: (body: unknown, version: string) => ContainerSpec }
  | { readonly exec: (body: unknown, version: string) => ExecSpec }
  | { readonly build: (req: Request) => BuildSpec };

export function engineLocals(res: Response): EngineLocals {
  return (res.locals.engine ??= { version: '' }) as EngineLocals;
}

/** A route handler: throws EngineError (or returns a rejected promise) for the writer to answer. */
export type EngineHandler = (req: Request, res: Response, version: string) => Promise<void> | void;

/**
 * Wraps a handler with the version gate, the policy checkpoint and the error writer. Every route
 * names its action (see `ENGINE_ACTIONS`), so none can be registered past the checkpoint. The
 * gate runs only for routes that exist, so an unknown path answers 404 `page not found`
 * whatever its version, as dockerd. A route given a decoder (container and exec create, build) has its
 * body (a build: its query) read and decoded once, before the checkpoint: the policy judges the typed spec the route
 * then hands the runtime ({@link routeSpec}, {@link routeExecSpec}, {@link routeBuildSpec}).
 */
export function engineRoute(ctx: EngineContext, action: EngineAction, handler: EngineHandler, decoder?: SpecDecoder) {
  return async (req: Request, res: Response, _next: NextFunction): Promise<void> => {
    const locals = engineLocals(res);
    try {
      locals.version = gateApiVersion(locals.requested, ctx.range);
      // A build's query (its body is the context, streamed to the runtime); a create's JSON body.
      if (decoder && 'build' in decoder) locals.buildSpec = decoder.build(req);
      else if (decoder) {
        const body = await readJsonBody(req, ctx.settings.maxBodyBytes);
        if ('container' in decoder) locals.spec = decoder.container(body, locals.version);
        else locals.execSpec = decoder.exec(body, locals.version);
      }
      const { spec, execSpec, buildSpec } = locals;
      const checked = await checkpoint(ctx, action, req, locals.version, { ...(spec ? { spec } : {}), ...(execSpec ? { execSpec } : {}), ...(buildSpec ? { buildSpec } : {}) });
      if (checked) locals.policy = checked;
      if (checked?.spec) locals.spec = checked.spec;
      await handler(req, res, locals.version);
    } catch (error) {
      if (!(error instanceof EngineError) || error.status >= 500) ctx.settings.onError?.(error, req);
      writeEngineError(res, error, locals.requested);
    }
  };
}

/** The route's JSON body, its keys spelled as Go's structs do (go-field-case.ts): the one the checkpoint already read, or read now. */
export async function routeBody(ctx: EngineContext, req: Request, res: Response): Promise<unknown> {
  const held = engineLocals(res).policy?.body;
  return held ? held.value : withGoFieldCase(await readJsonBody(req, ctx.settings.maxBodyBytes));
}

/** The container spec `engineRoute` decoded for a route registered with a `container` decoder. */
export function routeSpec(res: Response): ContainerSpec {
  const { spec } = engineLocals(res);
  if (!spec) throw new Error('routeSpec: the route was registered without a container decoder');
  return spec;
}

/** The build spec `engineRoute` decoded for a route registered with a `build` decoder. */
export function routeBuildSpec(res: Response): BuildSpec {
  const { buildSpec } = engineLocals(res);
  if (!buildSpec) throw new Error('routeBuildSpec: the route was registered without a build decoder');
  return buildSpec;
}

/** The exec spec `engineRoute` decoded for a route registered with an `exec` decoder. */
export function routeExecSpec(res: Response): ExecSpec {
  const { execSpec } = engineLocals(res);
  if (!execSpec) throw new Error('routeExecSpec: the route was registered without an exec decoder');
  return execSpec;
}
