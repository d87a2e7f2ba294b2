import { describe, test, expect } from '@jest/globals';
import {
  compareApiVersions, apiVersionLessThan, isApiVersion, minApiVersion, resolveVersionRange, gateApiVersion,
  ENGINE_RELEASES, DEFAULT_VERSION_RANGE, EngineError,
} from '../../../lib/engine/index.js';

describe('API versions compare as dockerd compares them (versions/compare.go)', () => {
  test('numerically per dot-separated part, not as strings', () => {
    expect(compareApiVersions('1.9', '1.28')).toBe(-1);
    expect(compareApiVersions('1.41', '1.5')).toBe(1);
    expect(compareApiVersions('1.28', '1.28')).toBe(0);
  });
  test('a missing part counts as 0', () => {
    expect(compareApiVersions('1.28', '1.28.0')).toBe(0);
    expect(compareApiVersions('1', '1.0')).toBe(0);
  });
  test('an unreadable or empty part counts as 0 (so "." is below everything)', () => {
    expect(compareApiVersions('.', '1.12')).toBe(-1);
    expect(compareApiVersions('1.x', '1.0')).toBe(0);
  });
  test('helpers: lessThan, min, strict form for configuration', () => {
    expect(apiVersionLessThan('1.29', '1.30')).toBe(true);
    expect(minApiVersion('1.41', '1.28')).toBe('1.28');
    expect(isApiVersion('1.41')).toBe(true);
    for (const bad of ['v1.41', '1', '1.41.0', '01.2', '', 'abc']) expect(isApiVersion(bad)).toBe(false);
  });
});

describe('a version range: default, explicit, by engine release', () => {
  test('defaults to the sample server range 1.12-1.28', () => {
    expect(resolveVersionRange()).toEqual({ min: '1.12', max: '1.28' });
    expect(DEFAULT_VERSION_RANGE).toEqual({ min: '1.12', max: '1.28' });
  });
  test('accepts { min, max } and "min-max" / "max" strings', () => {
    expect(resolveVersionRange({ min: '1.24', max: '1.41' })).toEqual({ min: '1.24', max: '1.41' });
    expect(resolveVersionRange('1.12-1.41')).toEqual({ min: '1.12', max: '1.41' });
    expect(resolveVersionRange('1.41')).toEqual({ min: '1.12', max: '1.41' });
    expect(resolveVersionRange({ max: '1.10' })).toEqual({ min: '1.10', max: '1.10' });
  });
  test('names a range by engine release with the documented table', () => {
    expect(ENGINE_RELEASES).toEqual({
      '17.10': '1.33', '17.09': '1.32', '17.07': '1.31', '17.06': '1.30', '17.05': '1.29', '17.04': '1.28', '17.03': '1.27',
      '1.13': '1.26', '1.12': '1.24', '1.11': '1.23', '1.10': '1.22', '1.9': '1.21', '1.8': '1.20', '1.7': '1.19', '1.6': '1.18',
    });
    expect(resolveVersionRange({ release: '17.04' })).toEqual({ min: '1.12', max: '1.28' });
    expect(resolveVersionRange({ release: '1.6' })).toEqual({ min: '1.12', max: '1.18' });
  });
  test('an invalid range fails at construction with a TypeError naming the option', () => {
    expect(() => resolveVersionRange({ min: '1.30', max: '1.28' })).toThrow(/versionRange.min \(1.30\) must not be above versionRange.max \(1.28\)/);
    expect(() => resolveVersionRange({ release: '18.01' })).toThrow(/versionRange.release "18.01" is not a known engine release/);
    expect(() => resolveVersionRange('v1.41')).toThrow(TypeError);
    expect(() => resolveVersionRange('1.2-1.3-1.4')).toThrow(/must look like/);
    expect(() => resolveVersionRange(42 as never)).toThrow(TypeError);
  });
});

describe('the version gate decides the version a request is served at', () => {
  const range = { min: '1.12', max: '1.28' };
  test('no version in the path means the newest', () => {
    expect(gateApiVersion(undefined, range)).toBe('1.28');
  });
  test('a version in range is served at that version', () => {
    expect(gateApiVersion('1.12', range)).toBe('1.12');
    expect(gateApiVersion('1.24', range)).toBe('1.24');
  });
  test('below the minimum: 400 with dockerd\'s "too old" wording', () => {
    let error: unknown;
    try {
      gateApiVersion('1.11', range);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EngineError);
    expect((error as EngineError).status).toBe(400);
    expect((error as EngineError).message).toBe(
      'client version 1.11 is too old. Minimum supported API version is 1.12, please upgrade your client to a newer version',
    );
  });
  test('above the maximum: 400 with dockerd\'s "too new" wording', () => {
    expect(() => gateApiVersion('1.29', range)).toThrow('client version 1.29 is too new. Maximum supported API version is 1.28');
  });
});
