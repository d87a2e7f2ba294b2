import { isAbsolute } from 'node:path';

/**
 * The one way options are checked, used by every options resolver: each check returns the value
 * (narrowed) or throws a `TypeError` naming the option, jose's and express-rate-limit's practice.
 * A resolver runs once, at construction, so a misconfiguration is reported at start-up.
 *
 * The plain functions name an option as `"name"`; {@link optionChecks}(owner) gives the same
 * checks naming it as `owner option "name"`, for factories whose options sit beside others'.
 */

/** Writes an option's name into a message. */
type Label = (name: string) => string;

function checks(label: Label) {
  const fail = (name: string, what: string): never => {
    throw new TypeError(`${label(name)} must be ${what}`);
  };
  const parsedUrl = (value: unknown, name: string, expected: string): URL => {
    if (typeof value !== 'string' && !(value instanceof URL)) fail(name, expected);
    try {
      return new URL(value as string | URL);
    } catch {
      return fail(name, expected);
    }
  };
  return {
    /** `name` must be a non-empty string. */
    nonEmptyString(value: unknown, name: string): string {
      if (typeof value !== 'string' || value.length === 0) fail(name, 'a non-empty string');
      return value as string;
    },
    /** `name` must be a string with something besides white space. */
    nonBlankString(value: unknown, name: string): string {
      if (typeof value !== 'string' || value.trim().length === 0) fail(name, 'a non-empty string');
      return value as string;
    },
    /** `name` must be a boolean. */
    booleanOption(value: unknown, name: string): boolean {
      if (typeof value !== 'boolean') fail(name, 'a boolean');
      return value as boolean;
    },
    /** `name` must be a (safe) integer of at least `min` and at most `max`; `unit` (`seconds`, `bytes`…) is named in the message. */
    integerOption(value: unknown, name: string, min: number, max?: number, unit?: string): number {
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || (max !== undefined && value > max)) {
        const kind = max !== undefined ? `an integer from ${min} to ${max}`
          : min === 1 ? 'a positive integer' : min === 0 ? 'a non-negative integer' : `an integer of at least ${min}`;
        fail(name, `${kind}${unit ? ` (${unit})` : ''}`);
      }
      return value as number;
    },
    /** `name` must be a finite number of at least `min` (fractions allowed). */
    numberOption(value: unknown, name: string, min: number, unit?: string): number {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
        fail(name, `${min === 0 ? 'a non-negative number' : `a number of at least ${min}`}${unit ? ` of ${unit}` : ''}`);
      }
      return value as number;
    },
    /** `name` must be an absolute path (a string). */
    absolutePath(value: unknown, name: string): string {
      if (typeof value !== 'string' || !isAbsolute(value)) fail(name, 'an absolute path');
      return value as string;
    },
    /** `name` must be an array of strings each passing `item`; `what` (`a list of …`) is named in the message. */
    stringList(value: unknown, name: string, what: string, item: (entry: string) => boolean): string[] {
      if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string' && item(entry))) fail(name, what);
      return value as string[];
    },
    /** `name` must be a function. */
    functionOption<T>(value: T, name: string): T {
      if (typeof value !== 'function') fail(name, 'a function');
      return value;
    },
    /** An optional function: undefined stays undefined. */
    optionalFunction<T>(value: T | undefined, name: string): T | undefined {
      if (value !== undefined && typeof value !== 'function') fail(name, 'a function');
      return value;
    },
    /** `name` must be an object (not null, not an array), e.g. a group of options. */
    objectOption<T>(value: T, name: string): T {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(name, 'an object');
      return value;
    },
    /** `name` must be an absolute http: or https: URL (a string or URL). */
    httpUrl(value: unknown, name: string): URL {
      const url = parsedUrl(value, name, 'an http(s) URL');
      if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(name, 'an http(s) URL');
      return url;
    },
    /** `name` must be ldap://HOST[:PORT] or ldaps://HOST[:PORT], with no path or query. */
    ldapUrl(value: unknown, name: string): URL {
      const expected = 'ldap://HOST[:PORT] or ldaps://HOST[:PORT], without a path or query (give "baseDN" separately)';
      const url = parsedUrl(value, name, expected);
      if ((url.protocol !== 'ldap:' && url.protocol !== 'ldaps:') || url.hostname === '' || (url.pathname !== '' && url.pathname !== '/') || url.search !== '') {
        fail(name, expected);
      }
      return url;
    },
  };
}

/** The checks, naming each option as `owner option "name"` (e.g. `engineRouter option "maxBodyBytes"`). */
export function optionChecks(owner: string): ReturnType<typeof checks> {
  return checks((name) => `${owner} option "${name}"`);
}

export const {
  nonEmptyString, nonBlankString, booleanOption, absolutePath, stringList, integerOption, numberOption, functionOption, optionalFunction, objectOption, httpUrl, ldapUrl,
} = checks((name) => `"${name}"`);
