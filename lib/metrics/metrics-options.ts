import type { Registry } from 'prom-client';
import { promClient } from './prom-client.js';
import { dockgateMetrics, type DockgateMetrics } from './dockgate-metrics.js';

/**
 * The `metrics` option shared by `tokenRouter`, `bearerGuard`/`requireBearer` and
 * `engineRouter`. Every router given the same registry and prefix shares one set of metrics,
 * created once: prom-client refuses a second registration of a name.
 *
 * @example
 * const registry = new Registry();
 * app.use(tokenRouter({ ...options, metrics: { registry } }));
 * app.get('/metrics', async (_req, res) => res.type(registry.contentType).send(await registry.metrics()));
 */
export interface MetricsOptions {
  /**
   * The prom-client registry the metrics are registered in, or `'default'` for prom-client's
   * global `register`. Defaults to `'default'` (giving `metrics: {}` asks for the global one).
   */
  registry?: Registry | 'default';
  /** Prefix of every metric name. Defaults to `dockgate_`. */
  prefix?: string;
}

/** Resolves the `metrics` option once, at construction; undefined when metrics are off. */
export function resolveMetrics(option: MetricsOptions | undefined, owner: string): DockgateMetrics | undefined {
  if (option === undefined) return undefined;
  if (option === null || typeof option !== 'object') throw new TypeError(`${owner} option "metrics" must be an object ({ registry, prefix })`);
  const registry = option.registry ?? 'default';
  const { register: defaultRegistry, Registry: PromRegistry } = promClient();
  if (registry !== 'default' && !(registry instanceof PromRegistry)) {
    // A registry from another copy of prom-client would not be `instanceof` ours; accept what quacks like one.
    const r = registry as Partial<Registry>;
    if (typeof r?.registerMetric !== 'function' || typeof r.getSingleMetric !== 'function') {
      throw new TypeError(`${owner} option "metrics.registry" must be a prom-client Registry or "default"`);
    }
  }
  const prefix = option.prefix ?? 'dockgate_';
  if (typeof prefix !== 'string' || !/^([a-zA-Z_:][a-zA-Z0-9_:]*)?$/.test(prefix)) {
    throw new TypeError(`${owner} option "metrics.prefix" must be a Prometheus name prefix such as "dockgate_"`);
  }
  return dockgateMetrics(registry === 'default' ? defaultRegistry : registry, prefix);
}
