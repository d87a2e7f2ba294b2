import { describe, expect, test } from '@jest/globals';
import { parseChallenge, parseChallenges } from '../../../lib/client/registry/index.js';

describe('a registry Bearer challenge becomes realm, service, scopes and error', () => {
  test('the distribution spec example', () => {
    expect(parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push"')).toEqual({
      scheme: 'Bearer', realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scopes: ['repository:samalba/my-app:pull,push'],
    });
  });
  test('error and no scope; scheme and parameter names are case-insensitive; whitespace around "=" is allowed', () => {
    expect(parseChallenge('bearer Realm = "https://a/token" , SERVICE=reg,error="invalid_token"')).toEqual({
      scheme: 'Bearer', realm: 'https://a/token', service: 'reg', scopes: [], error: 'invalid_token',
    });
  });
  test('no Bearer challenge (or one without realm), or no header: undefined', () => {
    expect(parseChallenge('Basic realm="x"')).toBeUndefined();
    expect(parseChallenge('Bearer service="x"')).toBeUndefined();
    expect(parseChallenge(null)).toBeUndefined();
    expect(parseChallenge('')).toBeUndefined();
  });
});

describe('several offered scopes become one scope list', () => {
  test('space-separated scopes naming the same resource are merged; duplicates dropped', () => {
    expect(parseChallenge('Bearer realm="r",scope="repository:a/b:pull repository:a/b:push repository:c/d:pull repository:a/b:pull"')?.scopes).toEqual([
      'repository:a/b:pull,push', 'repository:c/d:pull',
    ]);
  });
  test('a repeated scope parameter is joined into the same list', () => {
    expect(parseChallenge('Bearer realm="r",scope="repository:a/b:pull",scope="registry:catalog:*"')?.scopes).toEqual(['repository:a/b:pull', 'registry:catalog:*']);
  });
  test('a host:port name survives; a scope outside the grammar is passed back verbatim', () => {
    expect(parseChallenge('Bearer realm="r",scope="repository:localhost:5000/a:pull weird"')?.scopes).toEqual(['repository:localhost:5000/a:pull', 'weird']);
  });
});

describe('several challenges, token68 and quoted strings with escapes (RFC 9110 §11.6.1)', () => {
  test('Basic then Bearer in one header', () => {
    expect(parseChallenges('Basic realm="basic, with comma", Bearer realm="https://a/token",service="s"')).toEqual([
      { scheme: 'Basic', params: { realm: 'basic, with comma' } },
      { scheme: 'Bearer', params: { realm: 'https://a/token', service: 's' } },
    ]);
  });
  test('several header lines, as a list', () => {
    expect(parseChallenge(['Negotiate', 'Bearer realm="https://a/token"'])?.realm).toBe('https://a/token');
  });
  test('token68 forms', () => {
    expect(parseChallenges('Negotiate abc==, Basic YWxhZGRpbg, Bearer realm="r"')).toEqual([
      { scheme: 'Negotiate', params: {}, token68: 'abc==' },
      { scheme: 'Basic', params: {}, token68: 'YWxhZGRpbg' },
      { scheme: 'Bearer', params: { realm: 'r' } },
    ]);
  });
  test('escaped quote and backslash are unescaped; a quoted "," or "=" stays in the value', () => {
    expect(parseChallenge('Bearer realm="https://a/t",service="x\\",error=\\"y\\\\z,a=b"')).toEqual({
      scheme: 'Bearer', realm: 'https://a/t', service: 'x",error="y\\z,a=b', scopes: [],
    });
  });
  test('a repeated parameter other than scope keeps its first value (a later one cannot override the realm)', () => {
    expect(parseChallenge('Bearer realm="https://good/token",realm="https://evil/token"')?.realm).toBe('https://good/token');
  });
  test('a syntax error stops parsing but keeps what came before', () => {
    expect(parseChallenges('Bearer realm="r",service="unterminated')).toEqual([{ scheme: 'Bearer', params: { realm: 'r' } }]);
    expect(parseChallenges('Bearer realm="r", @@@')).toEqual([{ scheme: 'Bearer', params: { realm: 'r' } }]);
  });
});
