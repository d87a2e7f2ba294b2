import { describe, test, expect } from '@jest/globals';
import { spawn } from 'node:child_process';
import { statSync, existsSync, writeFileSync } from 'node:fs';
import { listenEngine } from '../../../lib/engine/index.js';
import { socketRequest, tempSocket, testApp, testRuntime } from '../helpers.js';

describe('listenEngine serves on a Unix socket or TCP', () => {
  test('a stale socket file (nothing answering) is replaced; the mode is applied; close() removes it', async () => {
    const socket = tempSocket();
    // A server killed with SIGKILL leaves its socket file behind.
    const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socket)}, () => console.log('up'))`]);
    await new Promise((r) => child.stdout.once('data', r));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect(existsSync(socket)).toBe(true);
    const l = await listenEngine(testApp(testRuntime().runtime), { socket, mode: 0o600 });
    expect(statSync(socket).mode & 0o777).toBe(0o600);
    expect(l.url).toBe(`unix://${socket}`);
    expect((await socketRequest(socket, 'GET', '/_ping')).body.toString()).toBe('OK');
    await l.close();
    expect(existsSync(socket)).toBe(false);
  });
  test('a socket that still answers is never stolen', async () => {
    const socket = tempSocket();
    const first = await listenEngine(testApp(testRuntime().runtime), { socket });
    await expect(listenEngine(testApp(testRuntime().runtime), { socket })).rejects.toThrow(/in use by a running server/);
    await first.close();
  });
  test('a regular file at the path is refused', async () => {
    const path = tempSocket('not-a-socket');
    writeFileSync(path, 'x');
    await expect(listenEngine(testApp(testRuntime().runtime), { socket: path })).rejects.toThrow(/is not a socket/);
  });
  test('TCP on 127.0.0.1 with an ephemeral port', async () => {
    const l = await listenEngine(testApp(testRuntime().runtime), { port: 0, insecure: true });
    expect(l.url).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`http://127.0.0.1:${l.url.split(':').pop()}/v1.29/_ping`);
    expect(res.status).toBe(400);
    expect(res.headers.get('api-version')).toBe('1.28');
    await l.close();
  });
  test('bad options throw TypeError', async () => {
    await expect(listenEngine(testApp(testRuntime().runtime), {})).rejects.toThrow(TypeError);
    await expect(listenEngine(testApp(testRuntime().runtime), { socket: '/tmp/x', port: 1 })).rejects.toThrow(TypeError);
  });
});

describe('listenEngine close() with graceMs lets in-flight requests finish', () => {
  test('a wait in flight gets its answer; new connections are refused; the socket file goes', async () => {
    const { runtime, release } = testRuntime();
    const socket = tempSocket();
    const l = await listenEngine(testApp(runtime), { socket });
    const created = JSON.parse((await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'slow:1' })).body.toString()) as { Id: string };
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${created.Id}/start`)).status).toBe(204);
    const waiting = socketRequest(socket, 'POST', `/v1.28/containers/${created.Id}/wait`);
    await new Promise((r) => setTimeout(r, 100));
    const closing = l.close({ graceMs: 5000 });
    await expect(socketRequest(socket, 'GET', '/_ping')).rejects.toThrow();
    setTimeout(release, 200);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString())).toEqual({ StatusCode: 7, Error: null });
    await closing;
    expect(existsSync(socket)).toBe(false);
  });
  test('without graceMs open connections are dropped at once', async () => {
    const { runtime } = testRuntime();
    const socket = tempSocket();
    const l = await listenEngine(testApp(runtime), { socket });
    const created = JSON.parse((await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'slow:1' })).body.toString()) as { Id: string };
    await socketRequest(socket, 'POST', `/v1.28/containers/${created.Id}/start`);
    const waiting = socketRequest(socket, 'POST', `/v1.28/containers/${created.Id}/wait`).then(() => 'answered', (err: Error) => err.message);
    await new Promise((r) => setTimeout(r, 100));
    await l.close();
    expect(await waiting).toBe('socket hang up');
  });
});
