import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createServer, connect, type Server } from 'node:net';
import request from 'supertest';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { describeWithPeers, dockerd, dockerImage } from '../../support/peers.js';
import { socketRequest, tempSocket, testApp } from '../helpers.js';

const IMAGE = 'busybox:local';
const DOCKERD = '/var/run/docker.sock';

/** A socket in front of dockerd that records each request line it passes on. */
const proxySocket = tempSocket('dockerd-proxy.sock');
const seen: string[] = [];
let proxy: Server;
const runtime = dockerRuntime({ socketPath: proxySocket });
const app = testApp(runtime, '1.24-1.41');
beforeAll(async () => {
  proxy = createServer((client) => {
    const engine = connect(DOCKERD);
    client.on('data', (chunk: Buffer) => {
      const line = /^(GET|POST|DELETE|HEAD|PUT) (\S+)/.exec(chunk.toString('latin1', 0, 512));
      if (line) seen.push(`${line[1]} ${line[2]}`);
      engine.write(chunk);
    });
    engine.pipe(client);
    client.on('error', () => engine.destroy());
    engine.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(proxySocket, resolve));
});
afterAll(async () => {
  await runtime.close?.();
  await new Promise((resolve) => proxy.close(resolve));
});

/** Creates (through `via`), starts and waits for `echo hi`; its id. */
async function ranEcho(tty: boolean, via: 'dockgate' | 'dockerd'): Promise<string> {
  const body = { Image: IMAGE, Cmd: ['echo', 'hi'], Tty: tty, HostConfig: { NetworkMode: 'none' } };
  const id = via === 'dockgate'
    ? (await request(app).post('/v1.41/containers/create').send(body)).body.Id as string
    : (JSON.parse((await socketRequest(DOCKERD, 'POST', '/v1.41/containers/create', body)).body.toString()) as { Id: string }).Id;
  expect(id).toMatch(/^[0-9a-f]{64}$/);
  expect((await request(app).post(`/v1.41/containers/${id}/start`)).status).toBe(204);
  expect((await request(app).post(`/v1.41/containers/${id}/wait`)).body.StatusCode).toBe(0);
  return id;
}

/** `GET /containers/{id}/logs?stdout=1` through dockgate, its body as the raw bytes sent. */
function stdoutLogs(id: string) {
  return request(app).get(`/v1.41/containers/${id}/logs?stdout=1`).buffer(true).parse((res, cb) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => cb(null, Buffer.concat(chunks)));
  });
}

describeWithPeers('the Docker runtime knows the TTY of a container it created: its logs cost dockerd one request, no inspect', [dockerd(), dockerImage(IMAGE)], () => {
  test('created through dockgate, with and without a TTY: one GET logs each, framed as dockerd frames it', async () => {
    for (const tty of [false, true]) {
      const id = await ranEcho(tty, 'dockgate');
      try {
        seen.length = 0;
        const logs = await stdoutLogs(id);
        expect(logs.status).toBe(200);
        expect(seen.filter((l) => !l.includes('/_ping'))).toEqual([`GET /v1.41/containers/${id}/logs?stdout=1`]);
        const out = logs.body as Buffer;
        if (tty) expect(out.toString()).toBe('hi\r\n');
        else expect([...out.subarray(0, 8)]).toEqual([1, 0, 0, 0, 0, 0, 0, 3]);
      } finally {
        await request(app).delete(`/v1.41/containers/${id}?force=1`);
      }
    }
  });
  test('a container dockerd made without dockgate is inspected for its TTY, and framed right', async () => {
    const id = await ranEcho(true, 'dockerd');
    try {
      seen.length = 0;
      const logs = await stdoutLogs(id);
      expect((logs.body as Buffer).toString()).toBe('hi\r\n');
      expect(seen).toContain(`GET /v1.41/containers/${id}/json`);
    } finally {
      await request(app).delete(`/v1.41/containers/${id}?force=1`);
    }
  });
});
