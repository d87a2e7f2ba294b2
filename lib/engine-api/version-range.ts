import { compareApiVersions, isApiVersion } from './api-version.js';
import { ENGINE_RELEASES } from './engine-releases.js';

/** The API versions a router serves; `max` is what it reports as its API version. */
export interface VersionRange {
  readonly min: string;
  readonly max: string;
}

/**
 * Ways to name a range: a {@link VersionRange}, `{ min?, max? }`, `{ release: '17.04' }`
 * (from {@link ENGINE_RELEASES}), or a string `"1.12-1.41"` / `"1.41"` (maximum only).
 */
export type VersionRangeInput =
  | VersionRange
  | { readonly min?: string; readonly max?: string }
  | { readonly release: string; readonly min?: string }
  | string;

/** The sample server's range (and dockgate's default): API 1.12 to 1.28 (engine 17.04). */
export const DEFAULT_VERSION_RANGE: VersionRange = Object.freeze({ min: '1.12', max: '1.28' });

/** Oldest minimum dockerd ever shipped; a range may go lower only by naming it explicitly. */
const DEFAULT_MIN = DEFAULT_VERSION_RANGE.min;

/**
 * Turns any accepted form into a validated `{ min, max }`, throwing a TypeError that names
 * the `versionRange` option when the input is not a valid range. Called once at construction.
 *
 * @example
 * resolveVersionRange({ release: '17.04' }); // { min: '1.12', max: '1.28' }
 * resolveVersionRange('1.12-1.41');          // { min: '1.12', max: '1.41' }
 */
export function resolveVersionRange(input?: VersionRangeInput): VersionRange {
  if (input === undefined) return DEFAULT_VERSION_RANGE;
  if (typeof input === 'string') return fromString(input);
  if (typeof input !== 'object' || input === null) {
    throw new TypeError(`versionRange must be a string, { min, max } or { release }, got ${typeof input}`);
  }
  if ('release' in input && input.release !== undefined) {
    const max = ENGINE_RELEASES[input.release];
    if (max === undefined) {
      throw new TypeError(
        `versionRange.release "${String(input.release)}" is not a known engine release (known: ${Object.keys(ENGINE_RELEASES).join(', ')})`,
      );
    }
    return checked(input.min ?? lowerDefault(max), max);
  }
  const { min, max } = input as { min?: string; max?: string };
  const top = max ?? DEFAULT_VERSION_RANGE.max;
  return checked(min ?? lowerDefault(top), top);
}

function fromString(text: string): VersionRange {
  const parts = text.trim().split('-');
  if (parts.length === 1) return checked(lowerDefault(parts[0]!), parts[0]!);
  if (parts.length === 2) return checked(parts[0]!, parts[1]!);
  throw new TypeError(`versionRange "${text}" must look like "1.12-1.41" or "1.41"`);
}

function lowerDefault(max: string): string {
  return isApiVersion(max) && compareApiVersions(max, DEFAULT_MIN) < 0 ? max : DEFAULT_MIN;
}

function checked(min: string, max: string): VersionRange {
  for (const [label, v] of [['min', min], ['max', max]] as const) {
    if (!isApiVersion(v)) throw new TypeError(`versionRange.${label} "${String(v)}" is not an API version like "1.41"`);
  }
  if (compareApiVersions(min, max) > 0) {
    throw new TypeError(`versionRange.min (${min}) must not be above versionRange.max (${max})`);
  }
  return Object.freeze({ min, max });
}
