import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import { tenancyPolicy, type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { admin, as, policyApp } from './support.js';

// `docker import URL` makes the engine itself GET the URL, from the host's network: under
// tenancyPolicy only administrators may. A loopback server stands for what a tenant must not
// reach (the host's own services, a cloud metadata address) and records every request it gets.
const REFUSAL = 'fromSrc: importing from a URL is reserved to administrators (the engine would fetch it from the host\'s network); send the archive as the request body instead (fromSrc=-, docker import FILE)';
// An empty tar (two zero blocks): a one-layer image with no files.
const EMPTY_TAR = Buffer.alloc(1024);

let dir: string;
let runtime: ContainerRuntime;
let app: Express;
let server: Server;
let base: string;
const served: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dockgate-policy-import-'));
  runtime = sandboxRuntime({ stateDir: dir });
  app = policyApp(runtime, tenancyPolicy({ admin }));
  server = createServer((req, res) => {
    served.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'Content-Type': 'application/x-tar' }).end(EMPTY_TAR);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => {
  served.length = 0;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await runtime.close?.();
  rmSync(dir, { recursive: true, force: true });
});

const statusLines = (text: string): unknown[] => text.trim().split('\n').map((line) => JSON.parse(line) as unknown);

describe('a tenant may not import from a URL: 403 naming fromSrc, and the engine fetches nothing', () => {
  test('fromSrc=http://127.0.0.1:PORT/x.tar (in its own namespace) is refused and the server sees no request', async () => {
    const res = await as(app, 'bob').post(`/v1.41/images/create?fromSrc=${encodeURIComponent(`${base}/x.tar`)}&repo=bob/fetched&tag=1`);
    expect({ status: res.status, body: res.body }).toEqual({ status: 403, body: { message: REFUSAL } });
    expect(served).toEqual([]);
    expect((await as(app, 'bob').get('/v1.41/images/bob/fetched:1/json')).status).toBe(404);
  });

  test('other spellings of a URL (upper-case scheme, https, no repo, an anonymous caller) are refused alike', async () => {
    const port = (server.address() as AddressInfo).port;
    for (const [user, query] of [
      ['bob', `fromSrc=HTTP://127.0.0.1:${port}/x.tar`],
      ['bob', `fromSrc=https://127.0.0.1:${port}/x.tar&repo=bob/s`],
      ['bob', `fromSrc=${encodeURIComponent(`http://user:secret@localhost:${port}/x.tar`)}`],
      [undefined, `fromSrc=${encodeURIComponent(`${base}/x.tar`)}`],
    ] as const) {
      const res = await as(app, user).post(`/v1.41/images/create?${query}`);
      expect({ user, query, status: res.status, body: res.body }).toEqual({ user, query, status: 403, body: { message: REFUSAL } });
    }
    expect(served).toEqual([]);
  });
});

describe('a tenant still imports from the request body (fromSrc=-)', () => {
  test('bob\'s docker import - into bob/… answers the image id', async () => {
    const res = await as(app, 'bob').post('/v1.41/images/create?fromSrc=-&repo=bob/body&tag=1').set('Content-Type', 'application/x-tar').send(EMPTY_TAR);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect((await as(app, 'bob').get('/v1.41/images/bob/body:1/json')).status).toBe(200);
  });
});

describe('an administrator still imports from a URL', () => {
  test('root\'s fromSrc=http://127.0.0.1:PORT/x.tar is fetched once and becomes the image', async () => {
    const url = `${base}/x.tar`;
    const res = await as(app, 'root').post(`/v1.41/images/create?fromSrc=${encodeURIComponent(url)}&repo=shared/fetched&tag=1`).buffer(true).parse((stream, done) => {
      let text = '';
      stream.on('data', (c: Buffer) => (text += c.toString()));
      stream.on('end', () => done(null, text));
    });
    expect(res.status).toBe(200);
    expect(statusLines(res.body as string)).toEqual([{ status: `Downloading from ${url}` }, { status: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }]);
    expect(served).toEqual(['GET /x.tar']);
    expect((await as(app, 'root').get('/v1.41/images/shared/fetched:1/json')).status).toBe(200);
  });
});

describe('a fromSrc that is not an http(s) URL stays the route\'s own 400, for tenants too', () => {
  test('ftp://… is dockerd\'s "unsupported protocol scheme", not the policy\'s 403', async () => {
    const port = (server.address() as AddressInfo).port;
    const res = await as(app, 'bob').post(`/v1.41/images/create?fromSrc=ftp://127.0.0.1:${port}/x.tar`);
    expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { message: `Get "ftp://127.0.0.1:${port}/x.tar": unsupported protocol scheme "ftp"` } });
    expect(served).toEqual([]);
  });
});

describe('a build\'s remote context is never fetched by the engine: 400 naming remote, for administrators too', () => {
  test('POST /build?remote=http://127.0.0.1:PORT/ctx.tar is refused and the server sees no request', async () => {
    for (const user of ['bob', 'root']) {
      const res = await as(app, user).post(`/v1.41/build?remote=${encodeURIComponent(`${base}/ctx.tar`)}&t=${user}/remote`);
      expect({ user, status: res.status, body: res.body }).toEqual({ user, status: 400, body: { message: expect.stringMatching(/^remote: building from a remote context/) } });
    }
    expect(served).toEqual([]);
  });
});
