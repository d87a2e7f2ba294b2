import type { Router } from 'express';
import { pipeline } from 'node:stream/promises';
import { engineRoute, type EngineContext } from '../http/context.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { abortOnClose } from '../http/output-response.js';

/** `GET /containers/{id}/export` (`docker export`): the container's filesystem as a tar, streamed. */
export function registerExportRoute(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  api.get(
    '/containers/:id/export',
    engineRoute(ctx, 'container.export', async (req, res) => {
      if (!runtime.exportContainer) throw EngineError.unsupported('exporting containers (docker export)', runtime.name);
      const abort = abortOnClose(req, res);
      const tar = await runtime.exportContainer((req.params as { id: string }).id, abort.signal);
      res.status(200).setHeader('Content-Type', 'application/x-tar');
      // As dockerd: once the status line is out, a failure can only cut the connection (the
      // client's tar then reports a truncated archive rather than taking a partial one as whole).
      await pipeline(tar, res).catch(() => res.destroy());
    }),
  );
}
