/**
 * Comparison of engine API versions ("1.28") with dockerd's own rules
 * (moby `api/types/versions/compare.go`): split on ".", each part read as an integer where an
 * unreadable or missing part counts as 0. So "1.28" equals "1.28.0", and "." compares as "0".
 *
 * @example
 * compareApiVersions('1.9', '1.28'); // -1
 */
export function compareApiVersions(a: string, b: string): -1 | 0 | 1 {
  const pa = a.split('.');
  const pb = b.split('.');
  const n = Math.max(pa.length, pb.length);
  for (let i = 0; i < n; i++) {
    const x = lenientInt(pa[i]);
    const y = lenientInt(pb[i]);
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return 0;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * Go's strconv.Atoi with the error ignored: anything not a plain integer is 0, and an integer
 * out of int64 range is clamped to its bound (ParseInt's ErrRange value), so
 * `/v9999999999999999999.1` is "too new", as dockerd says, not "too old".
 */
function lenientInt(part: string | undefined): bigint {
  if (part === undefined || !/^[+-]?\d+$/.test(part)) return 0n;
  const value = BigInt(part);
  return value > INT64_MAX ? INT64_MAX : value < INT64_MIN ? INT64_MIN : value;
}

/**
 * `a < b` in dockerd's version order.
 *
 * @example
 * apiVersionLessThan('1.29', '1.30'); // true
 */
export function apiVersionLessThan(a: string, b: string): boolean {
  return compareApiVersions(a, b) < 0;
}

/**
 * `a >= b` in dockerd's version order (used for "behaviour changed in API X" checks).
 *
 * @example
 * apiVersionAtLeast('1.42', '1.42'); // true
 */
export function apiVersionAtLeast(a: string, b: string): boolean {
  return compareApiVersions(a, b) >= 0;
}

/** The strict form a configured version must have: `<major>.<minor>`, digits only. */
const STRICT_VERSION = /^(0|[1-9]\d{0,3})\.(0|[1-9]\d{0,3})$/;

/**
 * True for a well-formed API version such as "1.41" (what a host may configure; requests are
 * compared leniently instead, as dockerd does).
 *
 * @example
 * isApiVersion('1.41'); // true
 * isApiVersion('v1.41'); // false
 */
export function isApiVersion(value: unknown): value is string {
  return typeof value === 'string' && STRICT_VERSION.test(value);
}

/**
 * The lower of two API versions (what a client settles on after negotiation).
 *
 * @example
 * minApiVersion('1.41', '1.28'); // '1.28'
 */
export function minApiVersion(a: string, b: string): string {
  return compareApiVersions(a, b) <= 0 ? a : b;
}
