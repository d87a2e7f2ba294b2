import type { Router } from 'express';
import { engineLocals, engineRoute, type EngineContext } from '../http/context.js';
import { abortOnClose, sendProgress } from '../http/output-response.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { queryString } from '../http/query.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';
import { registerImageImportRoute } from './image-import-route.js';

/**
 * `POST /images/create?fromImage=…&tag=…`: the pull the Docker CLI makes after create answered
 * `No such image` (`docker run`, `docker create`, `docker pull`). Importing (`fromSrc`) is the
 * import route's, registered first (image-import-route.ts).
 */
export function registerImageRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  registerImageImportRoute(api, ctx);

  api.post(
    '/images/create',
    engineRoute(ctx, 'image.pull', async (req, res, version) => {
      const fromImage = queryString(req.query.fromImage);
      if (fromImage === undefined || fromImage.trim() === '') {
        // dockerd falls through to an import from an empty URL and answers 500; missing input is a 400.
        throw EngineError.invalidParameter('fromImage is required');
      }
      const tag = queryString(req.query.tag);
      const target = parsePullReference(fromImage, tag);
      if (!runtime.pull) throw EngineError.unsupported('pulling images', runtime.name);
      const platform = queryString(req.query.platform);
      const registryAuth = req.headers['x-registry-auth'];
      const abort = abortOnClose(req, res);
      req.resume();
      const connectCheck = engineLocals(res).policy?.connectCheck;
      const progress = await runtime.pull({
        ...target,
        fromImage,
        ...(tag !== undefined && tag !== '' ? { tag } : {}),
        // `platform` on pulls arrived in API 1.32.
        ...(platform && apiVersionAtLeast(version, '1.32') ? { platform } : {}),
        ...(typeof registryAuth === 'string' && registryAuth !== '' ? { registryAuth } : {}),
        apiVersion: version,
        signal: abort.signal,
        ...(connectCheck ? { connectCheck } : {}),
      });
      res.status(200).setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      await sendProgress(progress, res);
    }),
  );
}
