import { describe, expect, test } from '@jest/globals';
import { formatBearerChallenge } from '../../lib/bearer/index.js';
import { quotedString } from '../../lib/http/quoted-string.js';
import { parseChallenge } from '../../lib/client/registry/index.js';

const scopes = [{ type: 'repository', name: 'samalba/my-app', actions: ['pull', 'push'] }];

describe('the challenge has the registry token access controller format', () => {
  test('realm and service, then the scope space-joined, then the error', () => {
    expect(formatBearerChallenge({ realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scopes, error: 'insufficient_scope' })).toBe(
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:samalba/my-app:pull,push",error="insufficient_scope"',
    );
  });
  test('no scope parameter when nothing is required, no error when no token was sent', () => {
    expect(formatBearerChallenge({ realm: 'https://a/token', service: 's', scopes: [] })).toBe('Bearer realm="https://a/token",service="s"');
  });
  test('several resources are space-separated in one scope parameter', () => {
    const header = formatBearerChallenge({ realm: 'https://a/token', service: 's', scopes: [...scopes, { type: 'repository', name: 'b/c', actions: ['pull'] }] });
    expect(header).toContain('scope="repository:samalba/my-app:pull,push repository:b/c:pull"');
  });
});

describe('challenge values are quoted-strings no value can break out of', () => {
  test('quotes and backslashes are escaped', () => {
    expect(quotedString('a"b\\c')).toBe('"a\\"b\\\\c"');
  });
  test('a value trying to close the string and add an error parameter stays one value', () => {
    const header = formatBearerChallenge({ realm: 'https://a/token', service: 'x",error="invalid_token', scopes: [] });
    expect(parseChallenge(header)).toEqual({ scheme: 'Bearer', realm: 'https://a/token', service: 'x",error="invalid_token', scopes: [] });
  });
  test.each(['a\r\nSet-Cookie: x=1', 'a\nb', 'a\u0000', 'a\u007f', 'snowman \u2603'])('control and non-Latin-1 characters are refused: %j', (value) => {
    expect(() => quotedString(value)).toThrow(TypeError);
  });
  test('a tab is allowed, as qdtext permits it', () => {
    expect(quotedString('a\tb')).toBe('"a\tb"');
  });
});
