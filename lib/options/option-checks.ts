/**
 * The one way options are checked, used by every options resolver: each check returns the value
 * (narrowed) or throws a `TypeError` naming the option, jose's and express-rate-limit's practice.
 * A resolver runs once, at construction, so a misconfiguration is reported at start-up.
 */

/** `name` must be a non-empty string. */
export function nonEmptyString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`"${name}" must be a non-empty string`);
  return value;
}

/** `name` must be a string (empty allowed). */
export function stringOption(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new TypeError(`"${name}" must be a string`);
  return value;
}

/** `name` must be a boolean. */
export function booleanOption(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw new TypeError(`"${name}" must be a boolean`);
  return value;
}

/** `name` must be an integer of at least `min` (and at most `max`), in the unit the message names (`of seconds`, `of bytes`…). */
export function integerOption(value: unknown, name: string, min: number, max = Number.MAX_SAFE_INTEGER, unit = ''): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw new TypeError(`"${name}" must be an integer${unit ? ` ${unit}` : ''}, ${range}`);
  }
  return value;
}

/** `name` must be a finite number of at least `min` (fractions allowed). */
export function numberOption(value: unknown, name: string, min: number, unit = ''): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new TypeError(`"${name}" must be a number${unit ? ` ${unit}` : ''}, at least ${min}`);
  }
  return value;
}

/** `name` must be a function. */
export function functionOption<T>(value: T, name: string): T {
  if (typeof value !== 'function') throw new TypeError(`"${name}" must be a function`);
  return value;
}

/** An optional function: undefined stays undefined. */
export function optionalFunction<T>(value: T | undefined, name: string): T | undefined {
  return value === undefined ? undefined : functionOption(value, name);
}

function parsedUrl(value: unknown, name: string, expected: string): URL {
  if (typeof value !== 'string' && !(value instanceof URL)) throw new TypeError(`"${name}" must be ${expected}`);
  try {
    return new URL(value);
  } catch {
    throw new TypeError(`"${name}" must be ${expected}`);
  }
}

/** `name` must be an absolute http: or https: URL (a string or URL). */
export function httpUrl(value: unknown, name: string): URL {
  const url = parsedUrl(value, name, 'an absolute http(s) URL');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`"${name}" must be an absolute http(s) URL`);
  return url;
}

/** `name` must be ldap://HOST[:PORT] or ldaps://HOST[:PORT], with no path or query. */
export function ldapUrl(value: unknown, name: string): URL {
  const expected = 'ldap://HOST[:PORT] or ldaps://HOST[:PORT], without a path or query';
  const url = parsedUrl(value, name, expected);
  if ((url.protocol !== 'ldap:' && url.protocol !== 'ldaps:') || url.hostname === '' || (url.pathname !== '' && url.pathname !== '/') || url.search !== '') {
    throw new TypeError(`"${name}" must be ${expected}`);
  }
  return url;
}

/** `name` must be an object (not null, not an array), e.g. a group of options. */
export function objectOption<T extends object>(value: T, name: string): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError(`"${name}" must be an object`);
  return value;
}
