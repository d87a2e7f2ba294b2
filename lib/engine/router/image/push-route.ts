import type { Router } from 'express';
import { engineLocals, engineRoute, type EngineContext } from '../http/context.js';
import { abortOnClose, sendProgress } from '../http/output-response.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { queryString } from '../http/query.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';

/**
 * `POST /images/{name}/push?tag=…` (`docker push`): the name (with slashes, `127.0.0.1:5000/a/b`)
 * and tag are checked here (400 in dockerd's words, where dockerd itself answers 500), the
 * credentials come in `X-Registry-Auth` as for a pull, and the progress is streamed as the
 * runtime writes it; a failure after the 200 is the stream's last `errorDetail` line.
 */
export function registerPushRoute(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  api.post(
    /^\/images\/(.+)\/push$/,
    engineRoute(ctx, 'image.push', async (req, res, version) => {
      req.resume();
      const name = (req.params as Record<string, string>)[0] ?? '';
      const tag = queryString(req.query.tag);
      if (name.includes('@') || (tag ?? '').includes(':')) throw EngineError.invalidParameter('cannot push a digest reference');
      parsePullReference(name, tag);
      if (!runtime.pushImage) throw EngineError.unsupported('pushing images', runtime.name);
      const registryAuth = req.headers['x-registry-auth'];
      // dockerd reads the credentials from the body when the header is missing (the pre-1.9
      // form no client sends any more); without either it answers this 400.
      if (typeof registryAuth !== 'string') throw EngineError.invalidParameter('Bad parameters and missing X-Registry-Auth: EOF');
      const abort = abortOnClose(req, res);
      const connectCheck = engineLocals(res).policy?.connectCheck;
      const progress = await runtime.pushImage({
        name, ...(tag !== undefined && tag !== '' ? { tag } : {}), registryAuth, apiVersion: version, signal: abort.signal, ...(connectCheck ? { connectCheck } : {}),
      });
      res.status(200).setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      await sendProgress(progress, res, 'push failed');
    }),
  );
}
