import type { Request, Router } from 'express';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { engineLocals, engineRoute, type EngineContext } from '../http/context.js';
import { shownImages } from '../http/checkpoint.js';
import { withoutForeignIds } from '../http/foreign-conflict.js';
import { abortOnClose, sendProgress } from '../http/output-response.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { boolValue, queryString } from '../http/query.js';
import { parseFilters } from '../../../engine-api/filters.js';
import { parsePullReference } from '../../../engine-api/pull-reference.js';
import { apiVersionAtLeast, apiVersionLessThan } from '../../../engine-api/api-version.js';

const LIST_FILTERS = ['dangling', 'label', 'reference', 'before', 'since', 'until'];
const PRUNE_FILTERS = ['dangling', 'label', 'until'];

/** dockerd's `/images/{name}/…` routes take names with slashes (`127.0.0.1:5000/a/b:1`). */
const NAMED = (suffix: string): RegExp => new RegExp(`^/images/(.+)/${suffix}$`);

/**
 * The image routes beyond pull: list, inspect, history, tag, remove, prune, save and load.
 * Each answers 501 naming the feature when the runtime lacks its operation.
 */
export function registerImageStoreRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  const name = (req: Request): string => (req.params as Record<string, string>)[0] ?? '';

  api.get(
    '/images/json',
    engineRoute(ctx, 'image.list', async (req, res, version) => {
      if (!runtime.listImages) throw EngineError.unsupported('listing images', runtime.name);
      const filters = new Map(parseFilters(queryString(req.query.filters), LIST_FILTERS));
      // `filter` (one reference) was folded into `filters` in 1.13 and removed in API 1.41.
      const legacy = queryString(req.query.filter);
      if (legacy && apiVersionLessThan(version, '1.41')) filters.set('reference', new Set([...(filters.get('reference') ?? []), legacy]));
      const images = await runtime.listImages({
        all: boolValue(req.query.all),
        filters,
        digests: boolValue(req.query.digests),
        // `shared-size` arrived in API 1.42.
        sharedSize: apiVersionAtLeast(version, '1.42') && boolValue(req.query['shared-size']),
        apiVersion: version,
      });
      writeEngineJson(res.status(200), (await shownImages(images, engineLocals(res).policy?.showImage)).map((i) => imageForVersion(i, version)));
    }),
  );

  api.get(
    '/images/get',
    engineRoute(ctx, 'image.save', async (req, res, version) => {
      const raw = req.query.names;
      const names = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String).filter((n) => n !== '');
      await save(names, req, res, version);
    }),
  );

  api.get(
    NAMED('get'),
    engineRoute(ctx, 'image.save', async (req, res, version) => save([name(req)], req, res, version)),
  );

  async function save(names: string[], req: Request, res: import('express').Response, version: string): Promise<void> {
    if (!runtime.saveImages) throw EngineError.unsupported('saving images (docker save)', runtime.name);
    if (names.length === 0) throw EngineError.invalidParameter('no images named to save (names)');
    // An image the caller does not see is saved as one that does not exist would be.
    const showImage = engineLocals(res).policy?.showImage;
    if (showImage && runtime.inspectImage) {
      for (const n of names) {
        const image = await runtime.inspectImage(n, version).catch((error: unknown) => {
          if (error instanceof EngineError && error.kind === 'NotFound') return undefined;
          throw error;
        });
        if (image && !(await showImage(image))) throw EngineError.notFound(`No such image: ${n}`);
      }
    }
    const abort = abortOnClose(req, res);
    const tar = await runtime.saveImages(names, abort.signal);
    res.status(200).setHeader('Content-Type', 'application/x-tar');
    // Streamed with back-pressure; a failure mid-way can only cut the connection (dockerd does the same).
    await pipeline(tar, res).catch(() => res.destroy());
  }

  api.post(
    '/images/load',
    engineRoute(ctx, 'image.load', async (req, res, version) => {
      if (!runtime.loadImages) {
        req.resume();
        throw EngineError.unsupported('loading images (docker load)', runtime.name);
      }
      const abort = abortOnClose(req, res);
      // dockerd defaults quiet to true when the parameter is absent (image_routes.go postImagesLoad).
      const quiet = req.query.quiet === undefined ? true : boolValue(req.query.quiet);
      // Under a policy the loader asks it again with the names it parsed, before any tag is written.
      const checkNames = engineLocals(res).policy?.checkNames;
      let progress: Readable;
      try {
        progress = await runtime.loadImages({ tar: req, quiet, apiVersion: version, signal: abort.signal, ...(checkNames ? { checkNames } : {}) });
      } catch (error) {
        if (!(error instanceof EngineError)) throw error;
        req.resume();
        // A policy's refusal of a name keeps its 403, as a refusal before reading would.
        if (error.kind === 'Forbidden') throw error;
        if (error.status >= 500) ctx.settings.onError?.(error, req);
        // dockerd has answered 200 before it reads the archive: what is wrong with the archive
        // (or its load) is the JSON stream's error message, quiet or not; docker-py turns it
        // into ImageLoadError. Only a refusal before reading (version, 501) keeps its status.
        progress = Readable.from([`${JSON.stringify({ errorDetail: { message: error.message }, error: error.message })}\n`]);
      }
      res.status(200).setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      await sendProgress(progress, res, 'load failed');
    }),
  );

  api.post(
    '/images/prune',
    engineRoute(ctx, 'image.prune', async (req, res, version) => {
      if (!runtime.pruneImages) throw EngineError.unsupported('pruning images', runtime.name);
      const filters = parseFilters(queryString(req.query.filters), PRUNE_FILTERS);
      writeEngineJson(res.status(200), await runtime.pruneImages(filters, version));
    }),
  );

  api.get(
    NAMED('json'),
    engineRoute(ctx, 'image.inspect', async (req, res, version) => {
      if (!runtime.inspectImage) throw EngineError.unsupported('inspecting images', runtime.name);
      writeEngineJson(res.status(200), imageForVersion(await runtime.inspectImage(name(req), version), version));
    }),
  );

  api.get(
    NAMED('history'),
    engineRoute(ctx, 'image.history', async (req, res, version) => {
      if (!runtime.imageHistory) throw EngineError.unsupported('image history', runtime.name);
      writeEngineJson(res.status(200), await runtime.imageHistory(name(req), version));
    }),
  );

  api.post(
    NAMED('tag'),
    engineRoute(ctx, 'image.tag', async (req, res) => {
      if (!runtime.tagImage) throw EngineError.unsupported('tagging images', runtime.name);
      const repo = queryString(req.query.repo) ?? '';
      const tag = queryString(req.query.tag);
      if (repo.trim() === '') throw EngineError.invalidParameter('repository name must have at least one component');
      if (repo.includes('@') || (tag ?? '').includes(':')) throw EngineError.invalidParameter('refusing to create a tag with a digest reference');
      const target = parsePullReference(repo, tag);
      await runtime.tagImage(name(req), target.ref);
      res.status(201).end();
    }),
  );

  api.delete(
    /^\/images\/(.+)$/,
    engineRoute(ctx, 'image.delete', async (req, res, version) => {
      if (!runtime.removeImage) throw EngineError.unsupported('removing images', runtime.name);
      const removed = await runtime.removeImage(name(req), { force: boolValue(req.query.force), noprune: boolValue(req.query.noprune), apiVersion: version }).catch(async (error: unknown) => {
        throw await withoutForeignIds(error, runtime, engineLocals(res).policy?.onlyOwner);
      });
      writeEngineJson(res.status(200), removed);
    }),
  );
}

/** `VirtualSize` left the image objects in API 1.44, `Container`/`ContainerConfig` in 1.45 (version history). */
function imageForVersion(image: Record<string, unknown>, version: string): Record<string, unknown> {
  if (apiVersionLessThan(version, '1.44')) return image;
  const out = { ...image };
  delete out.VirtualSize;
  if (apiVersionAtLeast(version, '1.45')) {
    delete out.Container;
    delete out.ContainerConfig;
  }
  return out;
}
