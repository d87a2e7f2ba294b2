import { EngineError } from '../../../engine-api/engine-error.js';
import type { ListOptions } from '../../../engine-api/runtime-types.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import { nameFilter } from '../../../engine-api/name-pattern.js';
import type { LocalContainer } from './local-container.js';
import { summaryView } from './container-views.js';
import { labelMatches } from './label-filter.js';
import { HEALTH_FILTER_VALUES } from './healthcheck.js';

/**
 * `docker ps`: the rows of `containers` its options and filters pick, latest first. `stopped`
 * gives a container that does not run its networks' entries (the executor's user networks).
 */
export function listContainers(
  containers: readonly LocalContainer[],
  { all, limit, filters }: ListOptions,
  stopped: ((c: LocalContainer) => Record<string, Record<string, unknown>>) | undefined,
): Record<string, unknown>[] {
  const now = Date.now();
  const pick = (name: string): ReadonlySet<string> | undefined => {
    const set = filters.get(name);
    return set && set.size > 0 ? set : undefined;
  };
  const ids = pick('id');
  const named = nameFilter(filters, true);
  const statuses = pick('status');
  const labels = pick('label');
  const ancestors = pick('ancestor');
  const health = pick('health');
  for (const value of health ?? []) {
    if (!(HEALTH_FILTER_VALUES as readonly string[]).includes(value)) throw EngineError.invalidParameter(`Unrecognised filter value for health: ${value}`);
  }
  // A limit counts the latest containers whatever their state, as dockerd's does: `docker ps -l`
  // and `-n N` send only `limit` and show a stopped container too.
  const everyState = all || (limit !== undefined && limit > 0) || statuses !== undefined;
  let rows = containers
    .filter((c) => everyState || c.status === 'running' || c.restarting === true)
    .filter((c) => !ids || [...ids].some((p) => c.id.startsWith(p)))
    .filter((c) => named(c.name))
    .filter((c) => !statuses || statuses.has(c.restarting ? 'restarting' : c.status))
    .filter((c) => !health || health.has(c.health?.Status ?? 'none'))
    .filter((c) => !ancestors || [...ancestors].some((a) => familiarImageRef(a) === c.image.ref))
    .filter((c) => !labels || [...labels].every((l) => labelMatches(c.labels, l)))
    .sort((a, b) => b.created.getTime() - a.created.getTime());
  if (limit !== undefined && limit > 0) rows = rows.slice(0, limit);
  return rows.map((c) => summaryView(c, now, c.status === 'running' || !stopped ? undefined : stopped(c)));
}
