import { describe, test, expect } from '@jest/globals';
import { logSettings, parseMaxSize } from '../../../lib/engine/runtime/local/log-config.js';
import { containerSpecOf } from '../../../lib/engine-api/container-spec.js';

const withLog = (LogConfig: unknown) => containerSpecOf({ Image: 'busybox', HostConfig: { LogConfig } });
const refusal = (LogConfig: unknown): string => {
  try {
    logSettings(withLog(LogConfig), 'sandbox');
  } catch (error) {
    return `${(error as { status: number }).status} ${(error as Error).message}`;
  }
  return 'accepted';
};

describe('max-size is read as dockerd reads it (binary units, optional i and b)', () => {
  test.each([['10m', 10 * 1024 ** 2], ['1k', 1024], ['1.5KiB', 1536], ['10 m', 10 * 1024 ** 2], ['2G', 2 * 1024 ** 3], ['100', 100]])('%s is %d bytes', (text, bytes) => {
    expect(parseMaxSize(text)).toBe(bytes);
  });
});

describe('LogConfig: json-file by default with a bounded rotation, local as its alias, none', () => {
  test('no LogConfig is json-file rotated at max-size 10m and max-file 3; the view shows no option, as nothing was asked (dockerd echoes the request)', () => {
    expect(logSettings(containerSpecOf({ Image: 'busybox' }), 'sandbox')).toEqual({
      driver: 'json-file', view: { Type: 'json-file', Config: {} }, rotation: { maxSize: 10 * 1024 ** 2, maxFile: 3 },
    });
  });
  test('options given replace the defaults one by one in the rotation; the view shows only those given; local keeps its name', () => {
    expect(logSettings(withLog({ Type: 'local', Config: { 'max-file': '5' } }), 'sandbox')).toEqual({
      driver: 'local', view: { Type: 'local', Config: { 'max-file': '5' } }, rotation: { maxSize: 10 * 1024 ** 2, maxFile: 5 },
    });
  });
  test('none has no rotation and no options', () => {
    expect(logSettings(withLog({ Type: 'none' }), 'sandbox')).toEqual({ driver: 'none', view: { Type: 'none', Config: {} } });
  });
});

describe('what cannot be honored is refused at create with a 400, in dockerd\'s words where dockerd has them', () => {
  test.each([
    [{ Type: 'bogus' }, '400 error looking up logging plugin bogus: plugin "bogus" not found'],
    [{ Type: 'syslog' }, '400 HostConfig.LogConfig.Type "syslog" is not supported by the sandbox runtime (json-file, local or none)'],
    [{ Type: 'json-file', Config: { foo: 'bar' } }, "400 unknown log opt 'foo' for json-file log driver"],
    [{ Type: 'local', Config: { foo: 'bar' } }, "400 unknown log opt 'foo' for log driver local"],
    [{ Config: { compress: 'true' } }, "400 log opt 'compress' is not supported by the sandbox runtime"],
    [{ Config: { 'max-size': 'abc' } }, "400 failed to initialize logging driver: invalid size: 'abc'"],
    [{ Config: { 'max-size': '0' } }, '400 failed to initialize logging driver: max-size must be a positive number'],
    [{ Config: { 'max-file': 'x' } }, '400 failed to initialize logging driver: strconv.Atoi: parsing "x": invalid syntax'],
    [{ Config: { 'max-file': '0' } }, '400 failed to initialize logging driver: max-file cannot be less than 1'],
    [{ Config: { 'max-size': 1 } }, '400 HostConfig.LogConfig.Config["max-size"] must be a string'],
    [{ Type: 'none', Config: { 'max-size': '1m' } }, '400 invalid logging opts for driver none'],
  ])('%j: %s', (config, expected) => {
    expect(refusal(config)).toBe(expected);
  });
});
