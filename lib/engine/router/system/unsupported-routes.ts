import type { Router } from 'express';
import { engineRoute, type EngineContext } from '../http/context.js';
import { EngineError } from '../../../engine-api/engine-error.js';

/**
 * Routes dockerd has that reach out to a registry or to BuildKit, which dockgate does not offer:
 * each answers 501 naming the feature (and what to use instead), where clients got a bare 404
 * "page not found" that reads like a wrong API version. `GET /images/search` (`docker search`,
 * docker-py's `images.search`) and `GET /distribution/{name}/json` (`docker manifest inspect`'s
 * engine route, docker-py's `images.get_registry_data`) ask a registry on the caller's behalf;
 * `POST /session` is BuildKit's session, which the classic builder never needs.
 */
export function registerUnsupportedRoutes(api: Router, ctx: EngineContext): void {
  const engine = `dockgate (${ctx.runtime.name ?? 'custom'} runtime)`;
  api.get(
    '/images/search',
    engineRoute(ctx, 'image.search', () => {
      throw EngineError.notImplemented(`searching a registry (GET /images/search, docker search) is not supported by ${engine}: ask the registry's own API`);
    }),
  );
  api.get(
    /^\/distribution\/(.+)\/json$/,
    engineRoute(ctx, 'image.distribution', () => {
      throw EngineError.notImplemented(`registry manifest inspection (GET /distribution/{name}/json) is not supported by ${engine}: pull the image and inspect it, or ask the registry`);
    }),
  );
  api.post(
    '/session',
    engineRoute(ctx, 'image.session', (req) => {
      req.resume();
      throw EngineError.notImplemented(`BuildKit sessions (POST /session) are not supported by ${engine}: build with the classic builder (DOCKER_BUILDKIT=0)`);
    }),
  );
}
