import { EngineError } from '../../../engine-api/engine-error.js';
import { parseTimestamp } from '../../../engine-api/filters.js';

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The prune `until` filter as dockerd reads it (timetypes.GetTimestamp): a Go duration before
 * now (`24h`, `1h30m`), a Unix timestamp, or an RFC 3339 date; milliseconds since the epoch.
 *
 * @example
 * parseUntil('10m', 600_000); // 0
 */
export function parseUntil(value: string, now = Date.now()): number {
  const text = value.trim();
  if (/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) {
    let ms = 0;
    for (const [, n, , unit] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * UNIT_MS[unit!]!;
    return now - ms;
  }
  const at = parseTimestamp(text, 'until');
  if (at === undefined) throw EngineError.invalidParameter(`failed to parse value as time or duration: "${text}" (until)`);
  return at;
}
