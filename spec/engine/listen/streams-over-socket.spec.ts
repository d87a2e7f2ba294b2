import { describe, test, expect, afterAll } from '@jest/globals';
import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import { FrameDecoder, listenEngine } from '../../../lib/engine/index.js';
import { listenOnSocket, socketRequest, testApp, testRuntime } from '../helpers.js';

const { runtime, release } = testRuntime();
const listening = listenOnSocket(runtime);
afterAll(async () => {
  release();
  await (await listening).close();
});

/** Sends a raw HTTP request on the socket and collects everything until the server closes. */
function rawExchange(socket: string, head: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    const chunks: Buffer[] = [];
    conn.on('data', (c) => chunks.push(c));
    conn.on('end', () => resolve(Buffer.concat(chunks)));
    conn.on('error', reject);
    conn.write(head);
  });
}

async function create(socket: string, body: object, name?: string): Promise<string> {
  const res = await socketRequest(socket, 'POST', `/v1.28/containers/create${name ? `?name=${name}` : ''}`, body);
  expect(res.status).toBe(201);
  return JSON.parse(res.body.toString()).Id as string;
}

describe('serving on a Unix socket (as the sample requests do)', () => {
  test('the version gate and headers are the same over the socket', async () => {
    const { socket } = await listening;
    const res = await socketRequest(socket, 'GET', '/v1.29/version');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['api-version']).toBe('1.28');
    expect(JSON.parse(res.body.toString())).toEqual({ message: 'client version 1.29 is too new. Maximum supported API version is 1.28' });
  });
});

describe('attach over an HTTP upgrade (docker run, dockerode)', () => {
  test('101 UPGRADED, then multiplexed output, and the server closes at exit', async () => {
    const { socket } = await listening;
    const id = await create(socket, { Image: 'busybox', Cmd: ['echo', 'attached'] });
    const exchange = rawExchange(socket, `POST /v1.28/containers/${id}/attach?stream=1&stdout=1&stderr=1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: 0\r\n\r\n`);
    await new Promise((r) => setTimeout(r, 50));
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`)).status).toBe(204);
    const wire = await exchange;
    const split = wire.indexOf('\r\n\r\n');
    const head = wire.subarray(0, split).toString();
    expect(head).toMatch(/^HTTP\/1\.1 101 UPGRADED\r\n/);
    expect(head).toMatch(/\r\nContent-Type: application\/vnd\.docker\.raw-stream\r\n/);
    expect(head).toMatch(/\r\nUpgrade: tcp\r\n/);
    expect(head).toMatch(/\r\nApi-Version: 1\.28/);
    const frames = new FrameDecoder().push(wire.subarray(split + 4));
    expect(frames.map((f) => [f.stream, f.payload.toString()])).toEqual([[1, 'attached\n']]);
  });
  test('an unknown container answers 404 JSON on the upgrade request', async () => {
    const { socket } = await listening;
    const wire = (await rawExchange(socket, 'POST /v1.28/containers/ghost/attach?stream=1&stdout=1 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n')).toString();
    expect(wire).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(wire).toMatch(/\{"message":"No such container: ghost"\}\n$/);
  });
});

describe('GET /events: subscribed before the headers, so a client can start the container next', () => {
  test('create/start/die/destroy of an AutoRemove container, filtered to it', async () => {
    const { socket } = await listening;
    const id = await create(socket, { Image: 'fail:1', HostConfig: { AutoRemove: true } });
    const filters = encodeURIComponent(JSON.stringify({ container: { [id]: true }, type: { container: true } }));
    const events: { Action: string; Actor: { ID: string; Attributes: Record<string, string> } }[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const req = httpRequest({ socketPath: socket, path: `/v1.28/events?since=0&filters=${filters}` }, (res) => {
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toBe('application/json');
        void socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`);
        let pending = '';
        res.on('data', (c: Buffer) => {
          pending += c.toString();
          const lines = pending.split('\n');
          pending = lines.pop()!;
          for (const l of lines) events.push(JSON.parse(l));
          if (events.some((e) => e.Action === 'destroy')) {
            req.destroy();
            resolve();
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    await done;
    expect(events.map((e) => e.Action)).toEqual(['create', 'start', 'die', 'destroy']);
    expect(events[2]!.Actor.Attributes.exitCode).toBe('3');
    expect(events.every((e) => e.Actor.ID === id)).toBe(true);
  });
  test('bad filters are 400', async () => {
    const { socket } = await listening;
    const res = await socketRequest(socket, 'GET', '/v1.28/events?filters=%7B%22bogus%22%3A%7B%7D%7D');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString())).toEqual({ message: "Invalid filter 'bogus'" });
  });
});

describe('wait from API 1.30 sends its headers before the container exits', () => {
  test('200 arrives while running; the body at exit', async () => {
    const wide = await listenEngine(testApp(runtime, '1.12-1.41'), { port: 0, insecure: true });
    const port = Number(wide.url.split(':').pop());
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1.41/containers/create`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Image: 'slow:1' }) });
      const { Id } = (await res.json()) as { Id: string };
      const waiting = await fetch(`http://127.0.0.1:${port}/v1.41/containers/${Id}/wait?condition=next-exit`, { method: 'POST' });
      expect(waiting.status).toBe(200);
      await fetch(`http://127.0.0.1:${port}/v1.41/containers/${Id}/start`, { method: 'POST' });
      const follow = await fetch(`http://127.0.0.1:${port}/v1.41/containers/${Id}/logs?stdout=1&follow=1`);
      expect(follow.status).toBe(200);
      release();
      expect(await waiting.json()).toEqual({ StatusCode: 7, Error: null });
      const body = Buffer.from(await follow.arrayBuffer());
      expect(new FrameDecoder().push(body).map((f) => f.payload.toString()).join('')).toBe('started\ndone\n');
    } finally {
      await wide.close();
    }
  });
});
