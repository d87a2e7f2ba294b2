import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { bearerOf, RegistryError, writeRegistryError, type BearerGuard } from 'dockgate';

/**
 * Registry-style routes of the demo, each behind the bearer guard: the `/v2/` base check (any
 * valid token, as registries answer it) and `/v2/<name>/tags/list` (pull on that repository).
 * Tags come from a small in-memory catalogue: the point is the protection, not storage. Mounted
 * at `/v2` (`app.use('/v2', registryRoutes(…))`), so other requests pass it with one prefix test.
 */
export function registryRoutes(guard: BearerGuard, catalogue: Map<string, string[]>): Router {
  const router = express.Router();
  const nameOf = (params: Record<string, unknown>): string => (params['name'] as string[]).join('/');
  router.get('/', guard([]), (_req, res) => {
    res.set('Docker-Distribution-Api-Version', 'registry/2.0').json({});
  });
  router.get('/*name/tags/list', guard((req) => `repository:${nameOf(req.params)}:pull`), (req, res) => {
    const name = nameOf(req.params);
    const tags = catalogue.get(name);
    res.set('Docker-Distribution-Api-Version', 'registry/2.0');
    if (!tags) {
      writeRegistryError(res, new RegistryError('NAME_UNKNOWN', 'repository name not known to registry', { status: 404, detail: { name } }));
      return;
    }
    res.json({ name, tags, requestedBy: bearerOf(req).subject });
  });
  // A path Express cannot decode (`/v2/a%ZZ/tags/list`) fails before any handler runs; answer it
  // in the registry's shape rather than with Express's HTML page.
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    if ((err as { status?: number }).status === 400) {
      writeRegistryError(res, new RegistryError('NAME_INVALID', 'invalid repository name', { status: 400 }));
      return;
    }
    next(err);
  });
  return router;
}
