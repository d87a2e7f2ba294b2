import { describe, test, expect, afterAll } from '@jest/globals';
import request from 'supertest';
import { request as httpRequest } from 'node:http';
import { listenOnSocket, socketRequest, testApp, testRuntime } from '../helpers.js';

// dockerd removes an AutoRemove container about 0.2 s after it exits (die → destroy measured at
// 160-210 ms on dockerd 20.10), and SDKs count on that window: docker-py's
// containers.run(auto_remove=True) starts the container, then asks for its logs.
const { runtime } = testRuntime();
const app = testApp(runtime, '1.24-1.41');
afterAll(async () => {
  await runtime.close?.();
});

async function started(body: object): Promise<string> {
  const created = await request(app).post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['x', 'hello'], ...body });
  expect(created.status).toBe(201);
  expect((await request(app).post(`/v1.41/containers/${created.body.Id}/start`)).status).toBe(204);
  return created.body.Id as string;
}

describe('an AutoRemove container is removed shortly after it exits, as by dockerd', () => {
  test('right after its exit its logs and inspect still answer; "removed" is reached within a second', async () => {
    const id = await started({ HostConfig: { AutoRemove: true } });
    const exited = await request(app).post(`/v1.41/containers/${id}/wait`);
    expect(exited.body.StatusCode).toBe(0);
    const logs = await request(app).get(`/v1.41/containers/${id}/logs?stdout=1&follow=1`).buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
    expect(logs.status).toBe(200);
    expect((logs.body as Buffer).subarray(8).toString()).toBe('hello\n');
    const began = Date.now();
    const removed = await request(app).post(`/v1.41/containers/${id}/wait?condition=removed`);
    expect(removed.status).toBe(200);
    expect(Date.now() - began).toBeLessThan(1000);
    expect((await request(app).get(`/v1.41/containers/${id}/json`)).status).toBe(404);
  });
  test('docker rm -f of a running container still removes it before answering', async () => {
    const { runtime: slowRuntime, release } = testRuntime();
    const slow = testApp(slowRuntime, '1.24-1.41');
    try {
      const created = await request(slow).post('/v1.41/containers/create').send({ Image: 'slow:1' });
      await request(slow).post(`/v1.41/containers/${created.body.Id}/start`);
      expect((await request(slow).delete(`/v1.41/containers/${created.body.Id}?force=1`)).status).toBe(204);
      expect((await request(slow).get(`/v1.41/containers/${created.body.Id}/json`)).status).toBe(404);
    } finally {
      release();
      await slowRuntime.close?.();
    }
  });
});

describe('a client attached before the exit (docker run --rm) has the output: the container goes once its attach stream has ended', () => {
  test('attach stream=1 before start; when the attach answer ends, inspect is already 404 (no 0.2 s wait)', async () => {
    const { runtime: own } = testRuntime();
    const listening = await listenOnSocket(own, '1.24-1.41');
    try {
      const created = await socketRequest(listening.socket, 'POST', '/v1.41/containers/create', { Image: 'busybox', Cmd: ['x', 'hello'], HostConfig: { AutoRemove: true } });
      const id = JSON.parse(created.body.toString()).Id as string;
      // The attach is answered (headers) before the start is sent, as the CLI does.
      const attached = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
        httpRequest({ socketPath: listening.socket, method: 'POST', path: `/v1.41/containers/${id}/attach?stream=1&stdout=1&stderr=1` }, resolve)
          .on('error', reject).end();
      });
      const output: Buffer[] = [];
      const ended = new Promise<void>((resolve) => {
        attached.on('data', (c: Buffer) => output.push(c));
        attached.on('end', resolve);
      });
      expect((await socketRequest(listening.socket, 'POST', `/v1.41/containers/${id}/start`)).status).toBe(204);
      await ended;
      expect(Buffer.concat(output).subarray(8).toString()).toBe('hello\n');
      expect((await socketRequest(listening.socket, 'GET', `/v1.41/containers/${id}/json`)).status).toBe(404);
    } finally {
      await listening.close();
      await own.close?.();
    }
  });
  test('without an attach, the same container is still there right after its exit', async () => {
    const id = await started({ HostConfig: { AutoRemove: true } });
    expect((await request(app).post(`/v1.41/containers/${id}/wait`)).body.StatusCode).toBe(0);
    expect((await request(app).get(`/v1.41/containers/${id}/json`)).status).toBe(200);
  });
});
