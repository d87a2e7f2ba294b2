import { describe, expect, test } from '@jest/globals';
import { pullError, registryErrors } from '../../../lib/engine/images/registry/registry-errors.js';

const body = (code: string, message: string) => JSON.stringify({ errors: [{ code, message, detail: null }] });

describe('a registry refusal is read as the Docker client reads it (challenge error first, then the body)', () => {
  test('insufficient_scope in the Bearer challenge is DENIED with the default message', () => {
    const entries = registryErrors(401, 'Bearer realm="http://a/token",service="r",scope="repository:x:pull",error="insufficient_scope"', body('UNAUTHORIZED', 'authentication required'));
    expect(entries[0]).toEqual({ code: 'DENIED', message: 'requested access to the resource is denied' });
  });

  test('a 401 with neither challenge error nor error body is UNAUTHORIZED', () => {
    expect(registryErrors(401, null, 'nope')).toEqual([{ code: 'UNAUTHORIZED', message: 'authentication required' }]);
  });
});

describe('refused pulls carry dockerd\'s messages (distribution/errors.go)', () => {
  test('DENIED → 404 pull access denied for <name>', () => {
    const err = pullError('127.0.0.1:5000/alice/x:1', 401, [{ code: 'DENIED', message: 'requested access to the resource is denied' }]);
    expect(err.status).toBe(404);
    expect(err.message).toBe("pull access denied for 127.0.0.1:5000/alice/x, repository does not exist or may require 'docker login': denied: requested access to the resource is denied");
  });

  test('MANIFEST_UNKNOWN → 404 manifest for <ref> not found', () => {
    const err = pullError('127.0.0.1:5000/alice/x:2', 404, registryErrors(404, null, body('MANIFEST_UNKNOWN', 'manifest unknown')));
    expect(err.status).toBe(404);
    expect(err.message).toBe('manifest for 127.0.0.1:5000/alice/x:2 not found: manifest unknown: manifest unknown');
  });

  test('NAME_UNKNOWN → 404 repository <name> not found', () => {
    const err = pullError('busybox:latest', 404, registryErrors(404, null, body('NAME_UNKNOWN', 'repository name not known to registry')));
    expect(err.message).toBe('repository busybox not found: name unknown: repository name not known to registry');
  });

  test('other codes keep their words and the status class (UNAUTHORIZED → 401)', () => {
    const err = pullError('busybox:latest', 401, registryErrors(401, null, ''));
    expect(err.status).toBe(401);
    expect(err.message).toBe('unauthorized: authentication required');
  });

  test('an answer without any error is a 500 naming the status', () => {
    expect(pullError('busybox:latest', 502, []).message).toBe('unexpected registry answer: HTTP 502');
  });
});
