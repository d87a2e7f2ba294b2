import type { Router } from 'express';
import { engineRoute, type EngineContext } from '../http/context.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { parseInteger, queryString } from '../http/query.js';
import { parseSignal } from '../../../engine-api/signal.js';
import { parseStopOptions } from './stop-options.js';

/** `POST /containers/{id}/kill`, `/stop` and `/resize`: `docker kill`, `docker stop`, and `docker run`'s signal and window-size proxying. */
export function registerStopKillRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;

  api.post(
    '/containers/:id/kill',
    engineRoute(ctx, 'container.kill', async (req, res) => {
      const signal = parseSignal(queryString(req.query.signal), 'SIGKILL');
      if (!runtime.kill) throw EngineError.unsupported('signalling containers', runtime.name);
      req.resume();
      await runtime.kill(req.params.id as string, signal);
      res.status(204).end();
    }),
  );

  api.post(
    '/containers/:id/stop',
    engineRoute(ctx, 'container.stop', async (req, res, version) => {
      const options = parseStopOptions(req.query, version);
      if (!runtime.stop) throw EngineError.unsupported('stopping containers', runtime.name);
      req.resume();
      await runtime.stop(req.params.id as string, options);
      res.status(204).end();
    }),
  );

  api.post(
    '/containers/:id/resize',
    engineRoute(ctx, 'container.resize', async (req, res) => {
      const height = parseInteger(queryString(req.query.h), 'h');
      const width = parseInteger(queryString(req.query.w), 'w');
      // dockerd answers a missing or malformed size with a 400 (strconv on h and w).
      if (height === undefined || width === undefined || height < 0 || width < 0 || height > 0xffff || width > 0xffff) {
        throw EngineError.invalidParameter('h and w must be terminal sizes (0-65535)');
      }
      if (!runtime.resize) throw EngineError.unsupported('resizing container terminals', runtime.name);
      req.resume();
      await runtime.resize(req.params.id as string, { height, width });
      res.status(200).end();
    }),
  );
}
