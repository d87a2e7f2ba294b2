import { EngineError } from './engine-error.js';

/**
 * A `since`/`until` timestamp in milliseconds since the epoch. Accepts what the Go client sends
 * ("<seconds>.<nanoseconds>"), plain seconds, and RFC 3339. Malformed values are a 400.
 *
 * @example
 * parseTimestamp('1700000000.500000000', 'since'); // 1700000000500
 */
export function parseTimestamp(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  const unix = /^(-?\d+)(?:\.(\d{1,9}))?$/.exec(text);
  if (unix) {
    const fraction = (unix[2] ?? '').padEnd(9, '0');
    return Number(unix[1]) * 1000 + Math.trunc(Number(fraction) / 1e6) * (text.startsWith('-') ? -1 : 1);
  }
  // Only RFC 3339 dates: Date.parse alone takes almost anything ("1.2.3" is 2003-01-02).
  const parsed = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/i.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(parsed)) throw EngineError.invalidParameter(`failed to parse value as time or duration: "${text}" (${name})`);
  return parsed;
}

/** Parsed `filters` JSON: filter name → accepted values. */
export type EngineFilters = ReadonlyMap<string, ReadonlySet<string>>;

/**
 * The `filters` query parameter: JSON `{"name": {"value": true}}`, or the pre-1.22 form
 * `{"name": ["value"]}`. Names outside `accepted` are a 400 "Invalid filter 'x'", as in dockerd.
 *
 * @example
 * parseFilters('{"container":{"abc":true}}', ['container', 'type']); // Map { container => Set { 'abc' } }
 */
export function parseFilters(value: string | undefined, accepted: readonly string[]): EngineFilters {
  const filters = new Map<string, Set<string>>();
  if (value === undefined || value.trim() === '') return filters;
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch (error) {
    throw EngineError.invalidParameter(`invalid filters: ${(error as Error).message}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw EngineError.invalidParameter('invalid filters: expected a JSON object');
  }
  for (const [name, values] of Object.entries(raw as Record<string, unknown>)) {
    if (!accepted.includes(name)) throw EngineError.invalidParameter(`Invalid filter '${name}'`);
    const set = new Set<string>();
    if (Array.isArray(values)) values.forEach((v) => set.add(String(v)));
    else if (values !== null && typeof values === 'object') {
      for (const [v, on] of Object.entries(values as Record<string, unknown>)) if (on === true) set.add(v);
    } else throw EngineError.invalidParameter(`invalid filters: values of '${name}' must be an object or array`);
    filters.set(name, set);
  }
  return filters;
}
