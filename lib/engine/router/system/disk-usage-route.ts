import type { Router } from 'express';
import { engineLocals, engineRoute, type EngineContext } from '../http/context.js';
import { ownedFilters, shownImages, visibleTo } from '../http/checkpoint.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { apiVersionAtLeast, apiVersionLessThan } from '../../../engine-api/api-version.js';

const DF_TYPES = ['container', 'image', 'volume', 'build-cache'];

/**
 * `GET /system/df` (`docker system df`). A runtime's own `diskUsage` answers when it has one;
 * otherwise the router composes the answer from the image, container and volume lists.
 * `type` (API 1.42) limits the sections; `BuilderSize` is in answers from 1.31 to 1.41.
 */
export function registerDiskUsageRoute(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  api.get(
    '/system/df',
    engineRoute(ctx, 'system.df', async (req, res, version) => {
      const raw = req.query.type;
      const requested = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String);
      const types = new Set(apiVersionAtLeast(version, '1.42') ? requested : []);
      for (const t of types) if (!DF_TYPES.includes(t)) throw EngineError.invalidParameter(`unknown object type: ${t}`);
      const want = (t: string): boolean => types.size === 0 || types.has(t);
      const onlyOwner = engineLocals(res).policy?.onlyOwner;
      const showImage = engineLocals(res).policy?.showImage;
      let usage: Record<string, unknown>;
      if (runtime.diskUsage) {
        usage = await runtime.diskUsage({ types, apiVersion: version });
        // The runtime answers for the whole engine: a narrowed caller sees its own containers and volumes only.
        for (const section of ['Containers', 'Volumes'] as const) {
          const rows = usage[section];
          if (Array.isArray(rows)) usage = { ...usage, [section]: (rows as Record<string, unknown>[]).filter((c) => visibleTo(onlyOwner, c.Labels)) };
        }
        // Images: the ones the caller sees, and the layers they count.
        if (showImage && Array.isArray(usage.Images)) {
          const images = await shownImages(usage.Images as Record<string, unknown>[], showImage);
          usage = { ...usage, Images: images, LayersSize: images.reduce((sum, i) => sum + (typeof i.Size === 'number' ? i.Size : 0), 0) };
        }
      }
      else {
        const noFilters = new Map();
        const [images, containers, volumes] = await Promise.all([
          want('image') && runtime.listImages
            ? runtime.listImages({ all: true, filters: noFilters, digests: false, sharedSize: false, apiVersion: version }).then((rows) => shownImages(rows, showImage))
            : Promise.resolve(undefined),
          want('container') ? runtime.list({ all: true, filters: ownedFilters(noFilters, onlyOwner) }) : Promise.resolve(undefined),
          want('volume') && runtime.listVolumes ? runtime.listVolumes(ownedFilters(noFilters, onlyOwner), version).then((v) => v.Volumes) : Promise.resolve(undefined),
        ]);
        usage = {
          ...(images ? { LayersSize: images.reduce((sum, i) => sum + (typeof i.Size === 'number' ? i.Size : 0), 0), Images: images } : {}),
          ...(containers ? { Containers: containers.map((c) => ({ SizeRw: 0, SizeRootFs: 0, ...c })) } : {}),
          ...(volumes ? { Volumes: volumes } : {}),
          ...(want('build-cache') ? { BuildCache: [] } : {}),
        };
      }
      if (apiVersionAtLeast(version, '1.31') && apiVersionLessThan(version, '1.42')) usage = { BuilderSize: 0, ...usage };
      writeEngineJson(res.status(200), usage);
    }),
  );
}
