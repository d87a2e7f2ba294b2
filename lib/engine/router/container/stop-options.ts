import type { StopOptions } from '../../../engine-api/runtime-types.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';
import { parseInteger, queryString } from '../http/query.js';
import { parseSignal } from '../../../engine-api/signal.js';

/**
 * `t` and `signal` of `POST /containers/{id}/stop` and `/restart`, parsed alike. A malformed `t`
 * is a 400 (dockerd answers strconv's 500); `signal` counts only from API 1.42, where it arrived.
 */
export function parseStopOptions(query: Record<string, unknown>, version: string): StopOptions {
  const timeout = parseInteger(queryString(query.t), 't');
  const raw = apiVersionAtLeast(version, '1.42') ? queryString(query.signal) : undefined;
  const signal = raw ? parseSignal(raw, 'SIGTERM') : undefined;
  return { ...(timeout === undefined ? {} : { timeout }), ...(signal ? { signal } : {}) };
}
