import type { Router } from 'express';
import { engineLocals, engineRoute, type EngineContext } from '../http/context.js';
import { ownedFilters } from '../http/checkpoint.js';
import { parseFilters, parseTimestamp } from '../../../engine-api/filters.js';
import { queryString } from '../http/query.js';
import { abortOnClose } from '../http/output-response.js';
import type { EngineEvent } from '../../../engine-api/runtime-types.js';
import { drainOrClose } from '../../../engine-api/drain-or-close.js';

/** Filters dockerd's `GET /events` accepts (daemon/events/filter.go). */
const EVENT_FILTERS = ['config', 'container', 'daemon', 'event', 'image', 'label', 'network', 'node', 'plugin', 'scope', 'secret', 'service', 'type', 'volume'];

/**
 * `GET /events`: a JSON stream, one event per line. The subscription is in place before the
 * status line goes out: the Go client's `Events()` returns only after the headers arrive, and
 * below API 1.30 the CLI starts a container right after subscribing and waits for its `die`.
 */
export function registerEventsRoute(api: Router, ctx: EngineContext): void {
  api.get(
    '/events',
    engineRoute(ctx, 'system.events', async (req, res) => {
      const filters = ownedFilters(parseFilters(queryString(req.query.filters), EVENT_FILTERS), engineLocals(res).policy?.onlyOwner);
      const since = parseTimestamp(queryString(req.query.since), 'since');
      const until = parseTimestamp(queryString(req.query.until), 'until');
      const abort = abortOnClose(req, res);
      const events = await ctx.runtime.events({ filters, signal: abort.signal, ...(since !== undefined ? { since } : {}), ...(until !== undefined ? { until } : {}) });
      res.status(200).setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      try {
        for await (const event of events as AsyncIterable<EngineEvent>) {
          if (res.write(`${JSON.stringify(event)}\n`)) continue;
          if (res.destroyed) break;
          // Leaving the loop ends (destroys) the runtime's stream even if it ignores the abort signal.
          await drainOrClose(res);
          if (res.destroyed) break;
        }
        res.end();
      } catch {
        res.destroy();
      }
    }),
  );
}
