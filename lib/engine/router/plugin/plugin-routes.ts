import type { Request, Router } from 'express';
import { engineRoute, type EngineContext } from '../http/context.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { parseFilters } from '../../../engine-api/filters.js';
import { queryString } from '../http/query.js';

/** dockerd's plugin list filters (daemon's acceptedPluginFilterTags). */
const PLUGIN_FILTERS = ['enabled', 'capability'] as const;

/**
 * The plugin routes of a node that has no managed plugins, which is what every dockgate node is
 * (its runtimes have no plugin system). What can be answered truthfully is answered as dockerd
 * 20.10 answers on a node without plugins: `GET /plugins` is an empty list (its filters checked
 * as dockerd checks them), and a route about one plugin by name is 404 `plugin "NAME" not found`.
 * What dockerd would carry out by fetching or building a plugin (`pull`, `privileges`, `create`,
 * `upgrade`) is refused with 501 naming the feature. SDKs call these: dockerode's suite lists
 * plugins, and `docker plugin ls` does too.
 */
export function registerPluginRoutes(api: Router, ctx: EngineContext): void {
  const engine = `dockgate (${ctx.runtime.name ?? 'custom'} runtime)`;
  const unsupported = (what: string) =>
    engineRoute(ctx, 'plugin.request', (req) => {
      req.resume();
      throw EngineError.notImplemented(`${what} is not supported by ${engine}: it has no plugin system`);
    });
  const notFound = engineRoute(ctx, 'plugin.request', (req: Request) => {
    req.resume();
    throw EngineError.notFound(`plugin ${JSON.stringify(String(req.params.name))} not found`);
  });

  api.get(
    '/plugins',
    engineRoute(ctx, 'plugin.request', (req, res) => {
      const filters = parseFilters(queryString(req.query.filters), PLUGIN_FILTERS);
      for (const value of filters.get('enabled') ?? []) {
        if (value !== 'true' && value !== 'false') throw EngineError.invalidParameter(`Invalid filter 'enabled=[${value}]'`);
      }
      res.json([]);
    }),
  );
  api.get('/plugins/privileges', unsupported('installing plugins (GET /plugins/privileges)'));
  api.post('/plugins/pull', unsupported('installing plugins (POST /plugins/pull, docker plugin install)'));
  api.post('/plugins/create', unsupported('creating plugins (POST /plugins/create, docker plugin create)'));
  api.post('/plugins/:name/upgrade', unsupported('upgrading plugins (POST /plugins/{name}/upgrade)'));
  api.get('/plugins/:name/json', notFound);
  api.delete('/plugins/:name', notFound);
  api.post(
    '/plugins/:name/enable',
    engineRoute(ctx, 'plugin.request', (req) => {
      req.resume();
      const timeout = queryString(req.query.timeout);
      // dockerd reads the timeout with strconv.Atoi before it looks the plugin up (its answer is a 500; the caller's input, a 400 here).
      if (timeout !== undefined && !/^[+-]?\d+$/.test(timeout)) throw EngineError.invalidParameter(`strconv.Atoi: parsing ${JSON.stringify(timeout)}: invalid syntax`);
      throw EngineError.notFound(`plugin ${JSON.stringify(String(req.params.name))} not found`);
    }),
  );
  for (const verb of ['disable', 'push', 'set'] as const) api.post(`/plugins/:name/${verb}`, notFound);
}
