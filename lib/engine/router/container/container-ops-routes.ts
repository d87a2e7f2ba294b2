import type { Router } from 'express';
import { pipeline } from 'node:stream/promises';
import { engineLocals, engineRoute, routeBody, type EngineContext } from '../http/context.js';
import { ownedFilters } from '../http/checkpoint.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { abortOnClose } from '../http/output-response.js';
import { boolValue, queryString } from '../http/query.js';
import { parseFilters } from '../../../engine-api/filters.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';
import { withoutForeignIds } from '../http/foreign-conflict.js';
import { parseStopOptions } from './stop-options.js';

/** dockerd's validContainerNamePattern. */
const NAME = /^\/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;

/**
 * restart, rename, pause/unpause, top, stats, prune, changes and update. Each answers 501
 * naming the feature and the runtime when the runtime lacks its operation.
 */
export function registerContainerOpsRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  const id = (params: unknown): string => (params as { id: string }).id;

  api.post(
    '/containers/:id/restart',
    engineRoute(ctx, 'container.restart', async (req, res, version) => {
      const options = parseStopOptions(req.query, version);
      if (!runtime.restart) throw EngineError.unsupported('restarting containers', runtime.name);
      req.resume();
      await runtime.restart(id(req.params), options);
      res.status(204).end();
    }),
  );

  api.post(
    '/containers/:id/rename',
    engineRoute(ctx, 'container.rename', async (req, res) => {
      const name = queryString(req.query.name) ?? '';
      if (name === '') throw EngineError.invalidParameter('Neither old nor new names may be empty');
      if (!NAME.test(name)) throw EngineError.invalidParameter(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
      if (!runtime.rename) throw EngineError.unsupported('renaming containers', runtime.name);
      req.resume();
      await runtime.rename(id(req.params), name.replace(/^\//, '')).catch(async (error: unknown) => {
        throw await withoutForeignIds(error, runtime, engineLocals(res).policy?.onlyOwner);
      });
      res.status(204).end();
    }),
  );

  for (const action of ['pause', 'unpause'] as const) {
    api.post(
      `/containers/:id/${action}`,
      engineRoute(ctx, `container.${action}`, async (req, res) => {
        const op = runtime[action];
        if (!op) throw EngineError.unsupported(`${action === 'pause' ? 'pausing' : 'unpausing'} containers`, runtime.name);
        req.resume();
        await op.call(runtime, id(req.params));
        res.status(204).end();
      }),
    );
  }

  api.get(
    '/containers/:id/top',
    engineRoute(ctx, 'container.top', async (req, res) => {
      if (!runtime.top) throw EngineError.unsupported('listing container processes (top)', runtime.name);
      const psArgs = queryString(req.query.ps_args) || '-ef';
      writeEngineJson(res.status(200), await runtime.top(id(req.params), psArgs));
    }),
  );

  api.get(
    '/containers/:id/stats',
    engineRoute(ctx, 'container.stats', async (req, res, version) => {
      if (!runtime.stats) throw EngineError.unsupported('container stats', runtime.name);
      // `stream` defaults to true; `one-shot` arrived in API 1.41 and only applies without streaming.
      const stream = req.query.stream === undefined ? true : boolValue(req.query.stream);
      const oneShot = !stream && apiVersionAtLeast(version, '1.41') && boolValue(req.query['one-shot']);
      const abort = abortOnClose(req, res);
      const lines = await runtime.stats(id(req.params), { stream, oneShot, apiVersion: version, signal: abort.signal });
      res.status(200).setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      await pipeline(lines, res).catch(() => res.destroy());
    }),
  );

  api.post(
    '/containers/prune',
    engineRoute(ctx, 'container.prune', async (req, res, version) => {
      const filters = parseFilters(queryString(req.query.filters), ['until', 'label', 'label!']);
      if (!runtime.pruneContainers) throw EngineError.unsupported('pruning containers', runtime.name);
      req.resume();
      writeEngineJson(res.status(200), await runtime.pruneContainers(ownedFilters(filters, engineLocals(res).policy?.onlyOwner), version));
    }),
  );

  api.get(
    '/containers/:id/changes',
    engineRoute(ctx, 'container.changes', async (req, res) => {
      if (!runtime.changes) throw EngineError.unsupported('listing container filesystem changes', runtime.name);
      const changes = await runtime.changes(id(req.params));
      // dockerd encodes no changes as null (a nil slice).
      writeEngineJson(res.status(200), changes && changes.length > 0 ? changes : null);
    }),
  );

  api.post(
    '/containers/:id/update',
    engineRoute(ctx, 'container.update', async (req, res) => {
      if (!runtime.update) {
        req.resume();
        throw EngineError.unsupported('updating containers', runtime.name);
      }
      const body = (await routeBody(ctx, req, res)) ?? {};
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw EngineError.invalidParameter('update config must be a JSON object');
      writeEngineJson(res.status(200), await runtime.update(id(req.params), body as Record<string, unknown>));
    }),
  );
}
