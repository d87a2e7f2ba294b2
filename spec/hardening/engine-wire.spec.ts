/**
 * Hardening of the engine API at the wire, on a real Unix socket with raw bytes supertest cannot
 * send: broken headers, lying Content-Length, chunked garbage, upgrades to the wrong route, huge
 * headers, half-sent requests and clients that vanish mid-stream. The server answers 4xx (Node's
 * parser answers the framing errors itself, as Go's net/http does for dockerd), keeps serving
 * everyone else, reports nothing to onError and keeps no connection open.
 */
import { describe, test, expect, beforeAll, afterAll } from '@jest/globals';
import express from 'express';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { engineRouter, listenEngine, type ContainerRuntime, type EngineListener } from '../../lib/engine/index.js';
import { scriptedRuntime } from '../../lib/engine/runtime/scripted/index.js';
import { tempSocket } from '../engine/helpers.js';
import { rawBody, rawHeader, rawRequest } from './support.js';

let listener: EngineListener;
let socket: string;
let runtime: ContainerRuntime;
const failures: unknown[] = [];
let release: () => void = () => undefined;

const PING = 'GET /_ping HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n';

beforeAll(async () => {
  const gate = new Promise<void>((resolve) => (release = resolve));
  runtime = scriptedRuntime({
    images: {
      'busybox:latest': ({ argv }) => ({ stdout: `${argv.slice(1).join(' ')}\n` }),
      'chatty:1': async ({ write, signal }) => {
        for (let i = 0; i < 2000 && !signal.aborted; i++) {
          write(1, `${'x'.repeat(1000)}\n`);
          await new Promise((r) => setImmediate(r));
        }
        await gate;
      },
    },
  });
  const app = express();
  app.use(engineRouter(runtime, '1.12-1.41', { onError: (e) => failures.push(e) }));
  socket = tempSocket();
  listener = await listenEngine(app, { socket });
});

afterAll(async () => {
  release();
  await listener.close();
});

async function openConnections(): Promise<number> {
  // Closing is asynchronous on the server side: give it a few turns.
  for (let i = 0; i < 50; i++) {
    const n = await new Promise<number>((resolve) => listener.server.getConnections((_e, count) => resolve(count)));
    if (n === 0) return 0;
    await new Promise((r) => setTimeout(r, 20));
  }
  return new Promise<number>((resolve) => listener.server.getConnections((_e, count) => resolve(count)));
}

async function stillServes(): Promise<void> {
  const answer = await rawRequest({ path: socket }, PING);
  expect(answer.status).toBe(200);
  expect(rawBody(answer)).toBe('OK');
}

async function createContainer(body: Record<string, unknown>): Promise<string> {
  const payload = JSON.stringify(body);
  const answer = await rawRequest({ path: socket }, `POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`, 2000);
  expect(answer.status).toBe(201);
  return (JSON.parse(rawBody(answer)) as { Id: string }).Id;
}

describe('framing errors are 400 from the HTTP parser and the server keeps serving', () => {
  test('a control byte in a header value is 400 and the connection closes', async () => {
    const answer = await rawRequest({ path: socket }, 'GET /_ping HTTP/1.1\r\nHost: d\r\nX-Bad: a\u0001b\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.closedByServer).toBe(true);
    await stillServes();
  });
  test('a header name with a space is 400', async () => {
    const answer = await rawRequest({ path: socket }, 'GET /_ping HTTP/1.1\r\nHost: d\r\nBad Name: x\r\n\r\n');
    expect(answer.status).toBe(400);
  });
  test('chunked garbage is 400', async () => {
    const answer = await rawRequest({ path: socket }, 'POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
    expect(answer.status).toBe(400);
    await stillServes();
  });
  test('Content-Length together with Transfer-Encoding (request smuggling) is 400', async () => {
    const answer = await rawRequest({ path: socket }, 'POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    expect(answer.status).toBe(400);
  });
  test('two different Content-Length headers are 400', async () => {
    const answer = await rawRequest({ path: socket }, 'POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}');
    expect(answer.status).toBe(400);
  });
  test('headers over 16 KiB are 431', async () => {
    const answer = await rawRequest({ path: socket }, `GET /_ping HTTP/1.1\r\nHost: d\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    await stillServes();
  });
  test('a Content-Length shorter than the body: the rest is parsed as a next request and refused with 400', async () => {
    const body = '{"Image":"busybox","Cmd":["echo"]}';
    const answer = await rawRequest({ path: socket }, `POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n${body}`);
    expect(answer.status).toBe(400);
    expect(answer.closedByServer).toBe(true);
    await stillServes();
    expect(failures).toEqual([]);
  });
});

describe('a request body that never arrives in full neither answers nor breaks anything', () => {
  test('a Content-Length longer than what is sent: no answer until the client gives up, nothing reported', async () => {
    const answer = await rawRequest({ path: socket }, 'POST /containers/create HTTP/1.1\r\nHost: d\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"Image":', 300);
    expect(answer.text).toBe('');
    await stillServes();
    expect(await openConnections()).toBe(0);
    expect(failures).toEqual([]);
  });
  test('slowloris: twenty half-sent header blocks do not keep others from being served', async () => {
    const halves = Array.from({ length: 20 }, () => rawRequest({ path: socket }, ['GET /_ping HTTP/1.1\r\n', 'Host: d\r\n', 'X-Slow: 1\r\n'], 500, 100));
    const started = Date.now();
    await stillServes();
    expect(Date.now() - started).toBeLessThan(400);
    await Promise.all(halves);
    expect(await openConnections()).toBe(0);
  });
});

describe('HTTP upgrades: only attach becomes a raw stream', () => {
  test('Upgrade: tcp on GET /_ping is an ordinary 200 answer, then the connection closes', async () => {
    const answer = await rawRequest({ path: socket }, 'GET /_ping HTTP/1.1\r\nHost: d\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(rawBody(answer)).toBe('OK');
    expect(answer.closedByServer).toBe(true);
  });
  test('Upgrade: websocket on create answers in the engine shape (400 here, the body never read), and the unread body does not keep the connection open', async () => {
    const answer = await rawRequest({ path: socket }, 'POST /containers/create HTTP/1.1\r\nHost: d\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(rawHeader(answer, 'content-type')).toBe('application/json');
    expect(answer.closedByServer).toBe(true);
    expect(await openConnections()).toBe(0);
  });
  test('Upgrade: tcp to attach an unknown container is 404 {"message"} and the connection closes', async () => {
    const answer = await rawRequest({ path: socket }, 'POST /v1.41/containers/nope/attach?stream=1&stdout=1 HTTP/1.1\r\nHost: d\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
    expect(answer.status).toBe(404);
    expect(rawHeader(answer, 'content-type')).toBe('application/json');
    expect(JSON.parse(rawBody(answer))).toEqual({ message: 'No such container: nope' });
    expect(answer.closedByServer).toBe(true);
  });
  test('attach without Upgrade streams on the same connection with Connection: close, then closes', async () => {
    const id = await createContainer({ Image: 'busybox', Cmd: ['echo', 'attached'] });
    const answer = rawRequest({ path: socket }, `POST /v1.41/containers/${id}/attach?stream=1&stdout=1 HTTP/1.1\r\nHost: d\r\n\r\n`, 2000);
    await new Promise((r) => setTimeout(r, 100));
    const start = await rawRequest({ path: socket }, `POST /v1.41/containers/${id}/start HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n`, 1000);
    expect(start.status).toBe(204);
    const attached = await answer;
    expect(attached.status).toBe(200);
    expect(rawHeader(attached, 'connection')).toBe('close');
    expect(attached.text).toContain('attached');
    expect(attached.closedByServer).toBe(true);
  });
});

describe('a client that disconnects mid-stream leaves no connection and no error behind', () => {
  test('logs?follow=1 on a container writing 2 MB: the client hangs up after the first bytes', async () => {
    const id = await createContainer({ Image: 'chatty:1', Cmd: ['x'] });
    expect((await rawRequest({ path: socket }, `POST /containers/${id}/start HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n`, 1000)).status).toBe(204);
    await new Promise<void>((resolve) => {
      const client = connect(socket);
      client.write(`GET /v1.41/containers/${id}/logs?follow=1&stdout=1 HTTP/1.1\r\nHost: d\r\n\r\n`);
      client.once('data', () => {
        client.destroy();
        resolve();
      });
    });
    expect(await openConnections()).toBe(0);
    await stillServes();
    expect(failures).toEqual([]);
  });
  test('events: a subscriber that hangs up is dropped', async () => {
    await new Promise<void>((resolve) => {
      const client = connect(socket);
      client.write('GET /v1.41/events HTTP/1.1\r\nHost: d\r\n\r\n');
      client.once('data', () => {
        client.destroy();
        resolve();
      });
    });
    await createContainer({ Image: 'busybox', Cmd: ['echo'] });
    expect(await openConnections()).toBe(0);
    expect(failures).toEqual([]);
  });
  test('wait on a running container: the client hangs up before the exit', async () => {
    const id = await createContainer({ Image: 'chatty:1', Cmd: ['x'] });
    await rawRequest({ path: socket }, `POST /containers/${id}/start HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n`, 1000);
    const answer = await rawRequest({ path: socket }, `POST /v1.41/containers/${id}/wait HTTP/1.1\r\nHost: d\r\n\r\n`, 200);
    expect(answer.status).toBe(200);
    expect(await openConnections()).toBe(0);
    expect(failures).toEqual([]);
  });
});

describe('an events subscriber that hangs up while its socket is full is let go', () => {
  test('the runtime\'s event stream is destroyed even when the route was waiting for drain', async () => {
    const base = scriptedRuntime({ images: { 'busybox:latest': () => ({}) } });
    let source: Readable | undefined;
    const flooding: ContainerRuntime = Object.assign(Object.create(base) as ContainerRuntime, {
      // Ignores the abort signal on purpose: only the route itself can end the subscription here.
      events: async () => {
        source = new Readable({ objectMode: true, read() {} });
        const attributes = { blob: 'x'.repeat(10_000) };
        for (let i = 0; i < 2000; i++) source.push({ Type: 'container', Action: 'create', Actor: { ID: String(i), Attributes: attributes } });
        return source;
      },
    });
    const app = express();
    app.use(engineRouter(flooding, '1.12-1.41'));
    const path = tempSocket();
    const own = await listenEngine(app, { socket: path });
    try {
      await new Promise<void>((resolve) => {
        const client = connect(path);
        client.write('GET /v1.41/events HTTP/1.1\r\nHost: d\r\n\r\n');
        client.once('data', () => {
          client.pause();
          setTimeout(() => {
            client.destroy();
            resolve();
          }, 200);
        });
      });
      for (let i = 0; i < 50 && !source?.destroyed; i++) await new Promise((r) => setTimeout(r, 20));
      expect(source?.destroyed).toBe(true);
    } finally {
      await own.close();
    }
  });
});
