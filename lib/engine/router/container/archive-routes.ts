import type { Request, Router } from 'express';
import { pipeline } from 'node:stream/promises';
import { engineRoute, type EngineContext } from '../http/context.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { abortOnClose } from '../http/output-response.js';
import { boolValue, queryString } from '../http/query.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';
import type { ContainerPathStat } from '../../../engine-api/container-operations.js';

/** `X-Docker-Container-Path-Stat`: base64 of the stat JSON, what `docker cp` reads before copying. */
export function pathStatHeader(stat: ContainerPathStat): string {
  return Buffer.from(JSON.stringify(stat)).toString('base64');
}

/** `GET|HEAD|PUT /containers/{id}/archive` (`docker cp` both ways; testcontainers' copy-to-container). */
export function registerArchiveRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  const target = (req: Request): { id: string; path: string } => {
    const path = queryString(req.query.path) ?? '';
    // httputils.ArchiveFormValues' words.
    if (path === '') throw EngineError.invalidParameter('bad parameter: path cannot be empty');
    return { id: (req.params as { id: string }).id, path };
  };
  const unsupported = (): EngineError => EngineError.unsupported('copying files (archive)', runtime.name);

  api.head(
    '/containers/:id/archive',
    engineRoute(ctx, 'container.archive.stat', async (req, res) => {
      const { id, path } = target(req);
      if (!runtime.statPath) throw unsupported();
      res.status(200).setHeader('X-Docker-Container-Path-Stat', pathStatHeader(await runtime.statPath(id, path)));
      res.end();
    }),
  );

  api.get(
    '/containers/:id/archive',
    engineRoute(ctx, 'container.archive.get', async (req, res) => {
      const { id, path } = target(req);
      if (!runtime.getArchive) throw unsupported();
      const abort = abortOnClose(req, res);
      const { stat, tar } = await runtime.getArchive(id, path, abort.signal);
      res.status(200).setHeader('X-Docker-Container-Path-Stat', pathStatHeader(stat));
      res.setHeader('Content-Type', 'application/x-tar');
      await pipeline(tar, res).catch(() => res.destroy());
    }),
  );

  api.put(
    '/containers/:id/archive',
    engineRoute(ctx, 'container.archive.put', async (req, res, version) => {
      const { id, path } = target(req);
      if (!runtime.putArchive) {
        req.resume();
        throw unsupported();
      }
      const abort = abortOnClose(req, res);
      await runtime.putArchive(id, path, req, {
        noOverwriteDirNonDir: boolValue(req.query.noOverwriteDirNonDir),
        // `copyUIDGID` arrived in API 1.31.
        copyUIDGID: apiVersionAtLeast(version, '1.31') && boolValue(req.query.copyUIDGID),
        signal: abort.signal,
      });
      res.status(200).end();
    }),
  );
}
