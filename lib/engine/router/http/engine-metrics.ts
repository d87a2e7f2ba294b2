import type { NextFunction, Request, Response } from 'express';
import type { DockgateMetrics } from '../../../metrics/index.js';
import { LocalRuntime } from '../../runtime/local/local-runtime.js';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import { engineLocals } from './context.js';

const NO_FILTERS = new Map<string, Set<string>>();

/**
 * Counts every engine request once it is answered (a stream: once it ends or its client goes),
 * by route pattern (`/containers/:id/json`, never the raw path with its id), served API version
 * and status, and times it. A path that matched no route is counted as `unmatched`.
 */
export function engineRequestMetrics(metrics: DockgateMetrics) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = performance.now();
    let done = false;
    const record = (): void => {
      if (done) return;
      done = true;
      const route = typeof req.route?.path === 'string' ? req.route.path : 'unmatched';
      const version = engineLocals(res).version || 'none';
      metrics.engineRequests.inc({ route, version, status: String(res.statusCode) });
      metrics.engineDuration.observe({ route }, (performance.now() - started) / 1000);
    };
    res.once('finish', record);
    res.once('close', record);
    next();
  };
}

/**
 * Has the running-containers gauge read this runtime when scraped. Only the local runtimes
 * (sandbox, process) are counted: their table is in memory, whereas a docker runtime would send
 * dockerd a list request per scrape (dockerd's own metrics cover it).
 */
export function countRunningContainers(metrics: DockgateMetrics, runtime: ContainerRuntime): void {
  if (!(runtime instanceof LocalRuntime)) return;
  if ([...metrics.runtimes].some((r) => (r as { runtime?: unknown }).runtime === runtime)) return;
  metrics.runtimes.add(Object.assign({
    name: runtime.name,
    running: async () => (await runtime.list({ all: false, filters: NO_FILTERS })).length,
  }, { runtime }));
}
