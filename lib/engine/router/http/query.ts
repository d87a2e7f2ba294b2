import { EngineError } from '../../../engine-api/engine-error.js';

/**
 * dockerd's `httputils.BoolValue`: "", "0", "no", "false" and "none" (trimmed, any case) are
 * false, anything else is true; an absent parameter is false.
 *
 * @example
 * boolValue('1'); // true
 * boolValue('None'); // false
 */
export function boolValue(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  const text = (Array.isArray(value) ? String(value[0] ?? '') : String(value)).trim().toLowerCase();
  return !(text === '' || text === '0' || text === 'no' || text === 'false' || text === 'none');
}

/**
 * A single query value as a string, or undefined. Repeated parameters keep the first value,
 * as Go's `url.Values.Get` does.
 *
 * @example
 * queryString(req.query.name);
 */
export function queryString(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.length > 0 ? String(value[0]) : undefined;
  if (value === undefined || value === null || typeof value === 'object') return undefined;
  return String(value);
}

/**
 * The logs `tail` parameter: a non-negative line count, or undefined for "all". Like dockerd,
 * a value that is not an integer (such as "all") means all lines.
 *
 * @example
 * parseTail('10'); // 10
 * parseTail('all'); // undefined
 */
export function parseTail(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/**
 * A non-negative integer query parameter (e.g. `limit`); absent is undefined, malformed a 400.
 *
 * @example
 * parseInteger('5', 'limit'); // 5
 */
export function parseInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^-?\d+$/.test(value)) throw EngineError.invalidParameter(`invalid value for ${name}: ${JSON.stringify(value)}`);
  return Number(value);
}
