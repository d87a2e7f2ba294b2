import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { testApp, testRuntime } from '../helpers.js';

describe('bad input to the image, network, volume and df routes is a 4xx with a message, never a 500', () => {
  const app = testApp(testRuntime().runtime, '1.12-1.43');
  const cases: [string, string, string?][] = [
    ['GET', '/v1.43/images/%ZZ/json'],
    ['GET', '/v1.43/images/json?filters=%7Bbad'],
    ['GET', '/v1.43/images/json?filters=%5B1%5D'],
    ['GET', `/v1.43/images/json?filters=${encodeURIComponent('{"dangling":{"maybe":true}}')}`],
    ['GET', `/v1.43/images/json?filters=${encodeURIComponent('{"before":{"nope:1":true}}')}`],
    ['GET', `/v1.43/images/json?filters=${encodeURIComponent('{"until":{"soon":true}}')}`],
    ['POST', `/v1.43/images/busybox/tag?repo=${'a'.repeat(300)}:${'b'.repeat(200)}`],
    ['POST', '/v1.43/images/busybox/tag?repo=UPPER&tag=1'],
    ['POST', '/v1.43/images/busybox/tag?repo=ok&tag=-bad'],
    ['POST', '/v1.43/images/nope/tag?repo=ok&tag=1'],
    ['DELETE', '/v1.43/images/sha256:zz'],
    ['POST', `/v1.43/images/prune?filters=${encodeURIComponent('{"reference":{"x":true}}')}`],
    ['POST', `/v1.43/images/prune?filters=${encodeURIComponent('{"dangling":{"false":true},"until":{"soon":true}}')}`],
    ['GET', `/v1.43/networks?filters=${encodeURIComponent('{"type":{"odd":true}}')}`],
    ['GET', `/v1.43/networks?filters=${encodeURIComponent('{"dangling":{"perhaps":true}}')}`],
    ['GET', '/v1.43/networks/nope'],
    ['GET', `/v1.43/volumes?filters=${encodeURIComponent('{"colour":{"x":true}}')}`],
    ['GET', '/v1.43/system/df?type=everything'],
  ];
  for (const [method, path] of cases) {
    test(`${method} ${path.slice(0, 90)}`, async () => {
      const res = await request(app)[method.toLowerCase() as 'get' | 'post' | 'delete'](path);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body.message).toEqual(expect.any(String));
    });
  }
});
