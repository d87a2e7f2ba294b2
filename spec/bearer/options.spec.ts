import { describe, expect, test } from '@jest/globals';
import { bearerGuard, requireBearer, type BearerOptions } from '../../lib/bearer/index.js';
import { tokenRouter } from '../../lib/index.js';
import { generated, ISSUER, REALM, tokens } from './support.js';

const build = (options: Partial<BearerOptions>) => () => bearerGuard({ realm: REALM, keys: tokens, ...options } as BearerOptions);

describe('options are validated once, at construction, with a TypeError naming the option', () => {
  test.each([
    ['realm', { realm: undefined }],
    ['realm', { realm: 'relative/token' }],
    ['realm', { realm: 'ftp://host/token' }],
    ['realm', { realm: 'http://h/tok"en\r\n' }],
    ['keys', { keys: undefined }],
    ['keys', { keys: { something: 1 } }],
    ['service', { service: '' }],
    ['service', { service: 'not-issued-by-this-token-service' }],
    ['service', { service: 'a"b\nc' }],
    ['issuer', { keys: { jwks: tokens.tokenService.keyRing.jwks }, service: 's' }],
    ['algorithms', { algorithms: [] }],
    ['algorithms', { algorithms: ['none'] }],
    ['algorithms', { algorithms: ['HS256'] }],
    ['clockTolerance', { clockTolerance: -1 }],
    ['clockTolerance', { clockTolerance: '60s' }],
    ['cache.maxEntries', { cache: { maxEntries: 0 } }],
    ['cache', { cache: 'yes' }],
    ['now', { now: 5 }],
    ['keys.timeoutDuration', { keys: { jwksUrl: 'http://127.0.0.1:1/jwks', timeoutDuration: -1 }, issuer: ISSUER, service: 's' }],
  ])('%s', (name, options) => {
    expect(build(options as Partial<BearerOptions>)).toThrow(TypeError);
    expect(build(options as Partial<BearerOptions>)).toThrow(`"${name}`);
  });
  test('service is required when the token service issues for several services, and defaults when it issues for one', () => {
    const multi = tokenRouter({ issuer: ISSUER, service: ['a', 'b'], keys: { privateKey: generated.privateKeyPem }, allowAnonymous: true });
    expect(() => bearerGuard({ realm: REALM, keys: multi })).toThrow('"service" is required');
    expect(() => bearerGuard({ realm: REALM, keys: multi, service: 'b' })).not.toThrow();
    expect(() => requireBearer([], { realm: new URL(REALM), keys: tokens })).not.toThrow();
  });
});
