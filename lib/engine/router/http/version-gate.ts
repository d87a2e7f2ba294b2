import { compareApiVersions } from '../../../engine-api/api-version.js';
import type { VersionRange } from '../../../engine-api/version-range.js';
import { EngineError } from '../../../engine-api/engine-error.js';

/**
 * The version gate: which API version a request is served at. No version in the path means
 * the newest (dockerd's `defaultVersion`); one outside the range is an InvalidParameter (400)
 * with dockerd's exact wording, since clients show it verbatim.
 *
 * @example
 * gateApiVersion(undefined, { min: '1.12', max: '1.28' }); // '1.28'
 * gateApiVersion('1.11', { min: '1.12', max: '1.28' });    // throws EngineError (400, "too old")
 */
export function gateApiVersion(requested: string | undefined, range: VersionRange): string {
  if (requested === undefined || requested === '') return range.max;
  if (compareApiVersions(requested, range.min) < 0) {
    throw EngineError.invalidParameter(
      `client version ${requested} is too old. Minimum supported API version is ${range.min}, please upgrade your client to a newer version`,
    );
  }
  if (compareApiVersions(requested, range.max) > 0) {
    throw EngineError.invalidParameter(
      `client version ${requested} is too new. Maximum supported API version is ${range.max}`,
    );
  }
  return requested;
}
