import type { Request, Router } from 'express';
import { engineLocals, engineRoute, routeBody, routeBuildSpec, type EngineContext } from '../http/context.js';
import { abortOnClose, sendProgress } from '../http/output-response.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { boolValue, queryString } from '../http/query.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import { OWNER_LABEL } from '../../policy/owner-label.js';
import { decodeBuildSpec } from './decode-build.js';
import { settleContainerSpec } from '../container/decode-spec.js';

/**
 * `POST /commit` (a container's changes as a new image) and `POST /build` (the classic builder's
 * context upload and message stream). Each answers 501 naming the feature when the runtime lacks it.
 */
export function registerBuildRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;

  api.post(
    '/commit',
    engineRoute(ctx, 'container.commit', async (req, res, version) => {
      if (!runtime.commit) throw EngineError.unsupported('committing containers (docker commit)', runtime.name);
      const container = queryString(req.query.container) ?? '';
      const repo = queryString(req.query.repo) ?? '';
      const tag = queryString(req.query.tag);
      if (repo === '' && tag !== undefined && tag !== '') throw EngineError.invalidParameter('tag is given without a repository (repo)');
      const ref = repo !== '' ? parsePullReference(repo, tag === '' ? undefined : tag).ref : undefined;
      const body = await routeBody(ctx, req, res);
      if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) throw EngineError.invalidParameter('the commit body must be a container config (a JSON object)');
      // dockerd pauses by default from API 1.13 (`pause` absent means true).
      const pause = req.query.pause === undefined || queryString(req.query.pause) === '' ? true : boolValue(req.query.pause);
      const created = await runtime.commit({
        container, pause, changes: list(req.query.changes), apiVersion: version,
        ...(ref ? { ref } : {}),
        ...(queryString(req.query.comment) ? { comment: queryString(req.query.comment) as string } : {}),
        ...(queryString(req.query.author) ? { author: queryString(req.query.author) as string } : {}),
        ...(body ? { config: body as Record<string, unknown> } : {}),
      });
      writeEngineJson(res.status(201), created);
    }),
  );

  api.post(
    '/build',
    engineRoute(ctx, 'image.build', async (req, res, version) => {
      if (!runtime.build) {
        req.resume();
        throw EngineError.unsupported('building images (docker build)', runtime.name);
      }
      const { options, run } = routeBuildSpec(res);
      // The policy's default capabilities taken away (NET_RAW for a tenant) from the RUN containers too, typed and in their HostConfig alike.
      const runSpec = settleContainerSpec(run, { withoutCapabilities: engineLocals(res).policy?.withoutCapabilities ?? [] });
      const { NetworkMode: _mode, ...hostConfig } = runSpec.raw.HostConfig ?? {};
      const abort = abortOnClose(req, res);
      // RUN containers belong to the caller, as the containers it creates itself do.
      const subject = engineLocals(res).policy?.caller.subject;
      const { checkPull, connectCheck, checkImage } = engineLocals(res).policy ?? {};
      const registryConfig = req.headers['x-registry-config'];
      const stream = await runtime.build({
        ...options,
        hostConfig, runSpec,
        context: req,
        containerLabels: subject !== undefined ? { [OWNER_LABEL]: subject } : {},
        ...(checkPull ? { checkPull } : {}),
        ...(connectCheck ? { connectCheck } : {}),
        ...(checkImage ? { checkImage } : {}),
        ...(typeof registryConfig === 'string' && registryConfig !== '' ? { registryConfig } : {}),
        apiVersion: version,
        signal: abort.signal,
      });
      res.status(200).setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      await sendProgress(stream, res, 'build failed');
    }, { build: decodeBuildSpec }),
  );
}

function list(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String).filter((v) => v !== '');
}

export type { Request };
