import { describe, test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { pathSegment } from '../../../lib/engine/runtime/docker/path-segment.js';
import { describeWithPeers, dockerd, dockerImage } from '../../support/peers.js';
import { socketRequest, testApp } from '../helpers.js';

// dockerd decodes a request path and cleans its "." and ".." segments before routing, so a
// reference forwarded as `..` (bare or between encoded slashes) would reach another endpoint.
describe('a reference becomes one path segment that cannot walk', () => {
  test('slashes, ? and % are encoded; dots inside a name are kept', () => {
    expect(pathSegment('127.0.0.1:5000/a/b:1', 'image')).toBe('127.0.0.1%3A5000%2Fa%2Fb%3A1');
    expect(pathSegment('a..b')).toBe('a..b');
    expect(pathSegment('%2E%2E')).toBe('%252E%252E');
  });
  test('a "." or ".." segment is the unknown object it names, in the engine\'s words', () => {
    expect(() => pathSegment('..')).toThrow(expect.objectContaining({ status: 404, message: 'No such container: ..' }));
    expect(() => pathSegment('../../images/busybox', 'image')).toThrow(expect.objectContaining({ status: 404, message: 'No such image: ../../images/busybox' }));
    expect(() => pathSegment('.', 'exec')).toThrow(expect.objectContaining({ status: 404, message: 'No such exec instance: .' }));
    expect(() => pathSegment('a/./b', 'network')).toThrow(expect.objectContaining({ status: 404, message: 'network a/./b not found' }));
    expect(() => pathSegment('..', 'volume')).toThrow(expect.objectContaining({ status: 404, message: 'get ..: no such volume' }));
    expect(() => pathSegment('')).toThrow(expect.objectContaining({ status: 400 }));
  });
});

const IMAGE = 'busybox:local';
const runtime = dockerRuntime({ socketPath: '/var/run/docker.sock' });
const app = testApp(runtime, '1.24-1.41');
afterAll(async () => {
  await runtime.close?.();
});

describeWithPeers('the Docker runtime never forwards a reference that would walk to another dockerd endpoint', [dockerd(), dockerImage(IMAGE)], () => {
  test('container, image, exec, network and volume references with dot segments are 404 from dockgate', async () => {
    const cases: [string, string, string][] = [
      ['get', '/v1.41/containers/%2E%2E/json', 'No such container: ..'],
      ['get', '/v1.41/containers/..%2Finfo%2F/json', 'No such container: ../info/'],
      ['post', '/v1.41/containers/..%2F..%2Fimages%2Fbusybox:local%2Ftag/start', 'No such container: ../../images/busybox:local/tag'],
      ['get', '/v1.41/images/..%2F..%2Finfo/json', 'No such image: ../../info'],
      ['post', '/v1.41/exec/%2E%2E/resize?h=1&w=1', 'No such exec instance: ..'],
      ['get', '/v1.41/networks/%2E%2E', 'network .. not found'],
      ['get', '/v1.41/volumes/%2E%2E', 'get ..: no such volume'],
    ];
    for (const [method, path, message] of cases) {
      const res = await request(app)[method as 'get'](path);
      expect([path, res.status, res.body]).toEqual([path, 404, { message }]);
    }
  });
  test('the image a walking DELETE aimed at is still there', async () => {
    const res = await request(app).delete(`/v1.41/containers/${encodeURIComponent(`../../images/${IMAGE}`)}?force=1`);
    expect(res.status).toBe(404);
    expect((await socketRequest('/var/run/docker.sock', 'GET', `/v1.41/images/${IMAGE}/json`)).status).toBe(200);
  });
  test('names with dots that are not segments still reach dockerd', async () => {
    const name = `dg-dots..${process.pid}`;
    const created = await request(app).post(`/v1.41/containers/create?name=${name}`).send({ Image: IMAGE, Cmd: ['true'], HostConfig: { NetworkMode: 'none' } });
    expect(created.status).toBe(201);
    try {
      expect((await request(app).get(`/v1.41/containers/${name}/json`)).body.Id).toBe(created.body.Id);
    } finally {
      await request(app).delete(`/v1.41/containers/${created.body.Id}?force=1`);
    }
  });
});
