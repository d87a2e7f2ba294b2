import type { Request, Router } from 'express';
import { engineLocals, engineRoute, routeBody, type EngineContext } from '../http/context.js';
import { ownedFilters } from '../http/checkpoint.js';
import { withoutForeignIds } from '../http/foreign-conflict.js';
import { OWNER_LABEL } from '../../policy/owner-label.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { boolValue, queryString } from '../http/query.js';
import { checkLabels } from '../http/labels-body.js';
import { parseFilters } from '../../../engine-api/filters.js';
import type { VolumeCreateBody } from '../../../engine-api/volume-operations.js';

const VOLUME_FILTERS = ['dangling', 'driver', 'label', 'name'];
const VOLUME_PRUNE_FILTERS = ['label', 'all'];

/**
 * Volumes: `GET /volumes`, `POST /volumes/create`, `POST /volumes/prune`, `GET /volumes/{name}`
 * and `DELETE /volumes/{name}` (`docker volume ls/create/prune/inspect/rm`). Listing is what
 * clients do before anything else (`docker volume ls`, testcontainers); a runtime without the
 * operation answers 501 naming it.
 */
export function registerVolumeRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  const param = (req: Request, key: string): string => (req.params as Record<string, string>)[key] ?? '';

  api.get(
    '/volumes',
    engineRoute(ctx, 'volume.list', async (req, res, version) => {
      if (!runtime.listVolumes) throw EngineError.unsupported('listing volumes', runtime.name);
      const filters = ownedFilters(parseFilters(queryString(req.query.filters), VOLUME_FILTERS), engineLocals(res).policy?.onlyOwner);
      writeEngineJson(res.status(200), await runtime.listVolumes(filters, version));
    }),
  );

  api.post(
    '/volumes/create',
    engineRoute(ctx, 'volume.create', async (req, res, version) => {
      if (!runtime.createVolume) {
        req.resume();
        throw EngineError.unsupported('creating volumes', runtime.name);
      }
      const body = (await routeBody(ctx, req, res)) ?? {};
      if (typeof body !== 'object' || Array.isArray(body)) throw EngineError.invalidParameter('volume create body must be a JSON object');
      // Which names are valid is the volume driver's business (dockerd's local driver checks its own); a non-string is not a name.
      const { Name, Driver } = body as VolumeCreateBody;
      if (Name !== undefined && typeof Name !== 'string') throw EngineError.invalidParameter('volume Name must be a string');
      if (Driver !== undefined && typeof Driver !== 'string') throw EngineError.invalidParameter('volume Driver must be a string');
      checkLabels((body as { Labels?: unknown }).Labels, 'VolumeCreateBody');
      // Under a policy the volume records its creator, as containers do.
      const subject = engineLocals(res).policy?.caller.subject;
      const labels = (body as VolumeCreateBody).Labels;
      const create = subject !== undefined && (labels as Record<string, string> | undefined)?.[OWNER_LABEL] === undefined
        ? { ...(body as VolumeCreateBody), Labels: { ...(labels ?? {}), [OWNER_LABEL]: subject } }
        : (body as VolumeCreateBody);
      writeEngineJson(res.status(201), await runtime.createVolume(create, version));
    }),
  );

  api.post(
    '/volumes/prune',
    engineRoute(ctx, 'volume.prune', async (req, res, version) => {
      if (!runtime.pruneVolumes) throw EngineError.unsupported('pruning volumes', runtime.name);
      writeEngineJson(res.status(200), await runtime.pruneVolumes(parseFilters(queryString(req.query.filters), VOLUME_PRUNE_FILTERS), version));
    }),
  );

  api.get(
    '/volumes/:name',
    engineRoute(ctx, 'volume.inspect', async (req, res, version) => {
      if (!runtime.inspectVolume) throw EngineError.unsupported('inspecting volumes', runtime.name);
      writeEngineJson(res.status(200), await runtime.inspectVolume(param(req, 'name'), version));
    }),
  );

  api.delete(
    '/volumes/:name',
    engineRoute(ctx, 'volume.delete', async (req, res) => {
      if (!runtime.removeVolume) throw EngineError.unsupported('removing volumes', runtime.name);
      await runtime.removeVolume(param(req, 'name'), boolValue(req.query.force)).catch(async (error: unknown) => {
        throw await withoutForeignIds(error, runtime, engineLocals(res).policy?.onlyOwner);
      });
      res.status(204).end();
    }),
  );
}
