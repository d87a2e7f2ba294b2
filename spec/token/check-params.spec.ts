import { describe, expect, test } from '@jest/globals';
import { checkGetParams, checkPostParams } from '../../lib/token/middleware/check-params.js';

const post = { grant_type: 'password', service: 'registry.local', client_id: 'docker', username: 'alice', password: 'pw' };

describe('POST /token fields are checked by pure rules, naming the field and never the value', () => {
  test('a complete form passes', () => {
    expect(checkPostParams(post)).toBeUndefined();
    expect(checkPostParams({ ...post, access_type: 'offline', scope: 'anything: checked by the scope parser' })).toBeUndefined();
  });
  test.each([
    [{ grant_type: undefined }, '"grant_type" is required'],
    [{ grant_type: '' }, '"grant_type" is required'],
    [{ service: undefined }, '"service" is required'],
    [{ client_id: '' }, '"client_id" is required'],
    [{ client_id: 'caf\u00e9' }, '"client_id" must be printable ASCII (RFC 6749 A.1)'],
    [{ access_type: 'always' }, '"access_type" must be "online" or "offline"'],
    [{ username: 'a\u0000b' }, '"username" holds a control character'],
    [{ password: ['a', 'b'] }, '"password" must be a string'],
    [{ password: 'x'.repeat(4097) }, '"password" must be at most 4096 characters'],
  ])('%j → %s', (patch, message) => {
    const params: Record<string, unknown> = { ...post, ...patch };
    for (const [k, v] of Object.entries(params)) if (v === undefined) delete params[k];
    const problem = checkPostParams(params);
    expect(problem).toBe(message);
    expect(problem).not.toContain('xxxx');
  });
});

describe('GET /token query is checked by pure rules', () => {
  test('service is the only required parameter', () => {
    expect(checkGetParams({ service: 's' })).toBeUndefined();
    expect(checkGetParams({})).toBe('"service" is required');
  });
  test('offline_token is "true" or "false"; account has no control characters', () => {
    expect(checkGetParams({ service: 's', offline_token: '1' })).toBe('"offline_token" must be "true" or "false"');
    expect(checkGetParams({ service: 's', account: 'a\nb' })).toBe('"account" holds a control character');
  });
});
