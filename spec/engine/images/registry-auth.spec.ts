import { describe, expect, test } from '@jest/globals';
import { decodeRegistryAuth } from '../../../lib/engine/images/registry/registry-auth.js';

const header = (body: unknown, encoding: BufferEncoding = 'base64url') => Buffer.from(JSON.stringify(body)).toString(encoding);

describe('X-Registry-Auth is base64url JSON of an AuthConfig (dockerd registry.DecodeAuthConfig)', () => {
  test('username and password are a password credential', () => {
    expect(decodeRegistryAuth(header({ username: 'alice', password: 'p+w/?', serveraddress: '127.0.0.1:5000' }))).toEqual({ kind: 'password', username: 'alice', password: 'p+w/?' });
  });

  test('the standard base64 alphabet with padding is read too', () => {
    expect(decodeRegistryAuth(header({ username: 'bob', password: '>>>???' }, 'base64'))).toEqual({ kind: 'password', username: 'bob', password: '>>>???' });
  });

  test('"auth" is base64 of user:password, as in config.json', () => {
    expect(decodeRegistryAuth(header({ auth: Buffer.from('carol:a:b').toString('base64') }))).toEqual({ kind: 'password', username: 'carol', password: 'a:b' });
  });

  test('an identity token is kept as a refresh token (the password is not needed)', () => {
    expect(decodeRegistryAuth(header({ username: 'alice', identitytoken: 'rt-123' }))).toEqual({ kind: 'identityToken', username: 'alice', identityToken: 'rt-123' });
  });

  test('a registry token is a bearer token to send as it is', () => {
    expect(decodeRegistryAuth(header({ registrytoken: 'jwt' }))).toEqual({ kind: 'registryToken', registryToken: 'jwt' });
  });

  test('no header, an empty header and {} are anonymous', () => {
    expect(decodeRegistryAuth(undefined)).toBeUndefined();
    expect(decodeRegistryAuth('')).toBeUndefined();
    expect(decodeRegistryAuth(header({}))).toBeUndefined();
    expect(decodeRegistryAuth(header(null))).toBeUndefined();
  });
});

describe('a malformed X-Registry-Auth is a 400 naming the header, never a silent anonymous pull', () => {
  test.each([
    ['not base64 JSON', 'not-json!!'],
    ['a JSON list', header([1])],
    ['an unknown field', header({ username: 'a', password: 'b', token: 'x' })],
    ['a non-string field', header({ username: 1 })],
    ['a password without a username', header({ password: 'x' })],
  ])('%s', (_what, value) => {
    let thrown: unknown;
    try {
      decodeRegistryAuth(value);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ status: 400, message: expect.stringMatching(/^invalid X-Registry-Auth header: /) });
    expect(String((thrown as Error).message)).not.toContain('"b"');
  });
});
