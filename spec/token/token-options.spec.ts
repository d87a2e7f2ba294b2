import { describe, expect, test } from '@jest/globals';
import { tokenRouter, type TokenOptions } from '../../lib/index.js';
import { authenticate, ecKey } from '../support/token-fixture.js';

const valid: TokenOptions = { issuer: 'i', service: 's', keys: { privateKey: ecKey.privateKeyPem }, authenticate };

describe('options are validated once, at construction, naming the option', () => {
  test.each([
    ['issuer', { issuer: '' }],
    ['service', { service: [] }],
    ['keys', { keys: undefined }],
    ['authenticate', { authenticate: undefined }],
    ['authenticate', { authenticate: 'yes' }],
    ['accessTokenTtl', { accessTokenTtl: 30 }],
    ['accessTokenTtl', { accessTokenTtl: 90.5 }],
    ['refreshTokens.idleTtl', { refreshTokens: { idleTtl: 10 } }],
    ['refreshTokens.idleTtl', { refreshTokens: { idleTtl: 1000, absoluteTtl: 100 } }],
    ['refreshTokens.store', { refreshTokens: { store: {} } }],
    ['tokenPath', { tokenPath: 'token' }],
    ['maxBodyBytes', { maxBodyBytes: 10 }],
    ['throttle.maxFailures', { throttle: { maxFailures: -1 } }],
    ['basicRealm', { basicRealm: 'caf\u00e9 \u2615' }],
    ['basicRealm', { issuer: 'issuer\u2615' }],
    ['basicRealm', { basicRealm: 'a\r\nSet-Cookie: x' }],
  ])('%s', (name, patch) => {
    expect(() => tokenRouter({ ...valid, ...(patch as object) } as TokenOptions)).toThrow(new RegExp(name.replace('.', '\\.')));
  });
  test('anonymous-only service needs no authenticate', () => {
    expect(() => tokenRouter({ ...valid, authenticate: undefined, allowAnonymous: true } as TokenOptions)).not.toThrow();
  });
  test('two keys with the same kid are refused', () => {
    expect(() => tokenRouter({ ...valid, keys: [{ privateKey: ecKey.privateKeyPem }, { privateKey: ecKey.privateKeyPem }] })).toThrow(/kid/);
  });
});
