import { describe, test, expect, afterAll } from '@jest/globals';
import { existsSync } from 'node:fs';
import request from 'supertest';
import { EngineError } from '../../../lib/engine/index.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { parseSignal } from '../../../lib/engine-api/signal.js';
import { listenOnSocket, socketRequest, testApp, testRuntime } from '../helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

/** Reads a JSON-lines body as text (supertest would try to parse it as one JSON document). */
const text = (res: request.Response, cb: (e: Error | null, body: string) => void): void => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (c: string) => (body += c));
  res.on('end', () => cb(null, body));
};

describe('parseSignal reads kill\'s signal parameter as dockerd does', () => {
  test('names with or without SIG, any case, and numbers', () => {
    expect(parseSignal('INT', 'SIGKILL')).toBe('SIGINT');
    expect(parseSignal('sigterm', 'SIGKILL')).toBe('SIGTERM');
    expect(parseSignal('9', 'SIGTERM')).toBe('SIGKILL');
    expect(parseSignal(undefined, 'SIGKILL')).toBe('SIGKILL');
    expect(parseSignal('', 'SIGKILL')).toBe('SIGKILL');
  });
  test('an unknown name, 0 or an unnamed number is a 400 "Invalid signal: X"', () => {
    for (const bad of ['FOO', '0', '99', 'SIG']) {
      expect(() => parseSignal(bad, 'SIGKILL')).toThrow(new EngineError('InvalidParameter', `Invalid signal: ${bad}`));
    }
  });
});

/** Creates and starts a container of the test runtime; returns its id. */
async function started(app: ReturnType<typeof testApp>, image: string, name?: string): Promise<string> {
  const created = await request(app).post(`/v1.28/containers/create${name ? `?name=${name}` : ''}`).send({ Image: image, Cmd: ['x'] });
  expect(created.status).toBe(201);
  const id = created.body.Id as string;
  expect((await request(app).post(`/v1.28/containers/${id}/start`)).status).toBe(204);
  return id;
}
const state = async (app: ReturnType<typeof testApp>, id: string): Promise<{ Status: string; ExitCode: number }> =>
  (await request(app).get(`/v1.28/containers/${id}/json`)).body.State;

describe('POST /containers/{id}/kill (scripted runtime: the script\'s abort signal)', () => {
  const app = testApp(testRuntime().runtime);
  test('204; SIGKILL by default, and the container has exited with 137 when kill answers', async () => {
    const id = await started(app, 'slow:1');
    const res = await request(app).post(`/v1.28/containers/${id}/kill`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await state(app, id)).toMatchObject({ Status: 'exited', ExitCode: 137 });
  });
  test('signal=INT (what --sig-proxy sends on Ctrl-C) ends it with 128 + 2', async () => {
    const id = await started(app, 'slow:1');
    expect((await request(app).post(`/v1.28/containers/${id}/kill?signal=INT`)).status).toBe(204);
    const wait = await request(app).post(`/v1.28/containers/${id}/wait`);
    expect(wait.body).toEqual({ StatusCode: 130, Error: null });
  });
  test('a signal whose default is to ignore (WINCH) leaves it running', async () => {
    const id = await started(app, 'slow:1');
    expect((await request(app).post(`/v1.28/containers/${id}/kill?signal=WINCH`)).status).toBe(204);
    expect((await state(app, id)).Status).toBe('running');
    await request(app).post(`/v1.28/containers/${id}/kill`);
  });
  test('not running is 409 "Cannot kill container: <ref>: Container <id> is not running"', async () => {
    const created = await request(app).post('/v1.28/containers/create?name=idle').send({ Image: 'busybox', Cmd: ['x'] });
    const res = await request(app).post('/v1.28/containers/idle/kill');
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ message: `Cannot kill container: idle: Container ${created.body.Id} is not running` });
  });
  test('unknown is 404 "Cannot kill container: <ref>: No such container: <ref>"', async () => {
    const res = await request(app).post('/v1.28/containers/nosuch/kill');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Cannot kill container: nosuch: No such container: nosuch' });
  });
  test('a bad signal is 400 before the container is looked up', async () => {
    const res = await request(app).post('/v1.28/containers/nosuch/kill?signal=FOO');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Invalid signal: FOO' });
  });
  test('kill and die are published as events, kill with the signal number', async () => {
    const id = await started(app, 'slow:1');
    const since = Date.now() / 1000 - 5;
    await request(app).post(`/v1.28/containers/${id}/kill?signal=TERM`);
    const events = await request(app).get(`/v1.28/events?since=${since}&until=${Date.now() / 1000 + 1}&filters=${encodeURIComponent(JSON.stringify({ container: { [id]: true } }))}`).buffer(true).parse(text);
    const actions = (events.body as string).trim().split('\n').map((l) => JSON.parse(l) as { Action: string; Actor: { Attributes: Record<string, string> } });
    expect(actions.map((e) => e.Action)).toEqual(['create', 'start', 'kill', 'die']);
    expect(actions[2]?.Actor.Attributes.signal).toBe('15');
    expect(actions[3]?.Actor.Attributes.exitCode).toBe('143');
  });
});

describe('POST /containers/{id}/stop (scripted runtime)', () => {
  const app = testApp(testRuntime().runtime);
  test('204 once it has exited (SIGTERM: 143)', async () => {
    const id = await started(app, 'slow:1');
    const res = await request(app).post(`/v1.28/containers/${id}/stop`);
    expect(res.status).toBe(204);
    expect(await state(app, id)).toMatchObject({ Status: 'exited', ExitCode: 143 });
  });
  test('not running is 304 without a body, as dockerd', async () => {
    const id = await started(app, 'busybox');
    await request(app).post(`/v1.28/containers/${id}/wait`);
    const res = await request(app).post(`/v1.28/containers/${id}/stop`);
    expect(res.status).toBe(304);
    expect(res.text).toBe('');
  });
  test('unknown is 404 "No such container: <ref>"; a malformed t is 400 (dockerd: 500)', async () => {
    const missing = await request(app).post('/v1.28/containers/nosuch/stop');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'No such container: nosuch' });
    const bad = await request(app).post('/v1.28/containers/nosuch/stop?t=abc');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'invalid value for t: "abc"' });
  });
});

const hasBusybox = existsSync('/bin/busybox');
const busybox: PeerCheck = { name: '/bin/busybox (busybox-static)', available: () => hasBusybox };

describeWithPeers('kill and stop signal the child process (process runtime)', [busybox], () => {
  const runtime = processRuntime({ images: { busybox: { program: '/bin/busybox' } } });
  const listening = hasBusybox ? listenOnSocket(runtime) : undefined;
  afterAll(async () => {
    await runtime.close?.();
    await (await listening)?.close();
  });
  async function run(cmd: string[]): Promise<{ socket: string; id: string }> {
    const { socket } = (await listening)!;
    const created = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: cmd });
    const id = JSON.parse(created.body.toString()).Id as string;
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`)).status).toBe(204);
    return { socket, id };
  }
  const inspect = async (socket: string, id: string): Promise<{ Status: string; ExitCode: number }> =>
    JSON.parse((await socketRequest(socket, 'GET', `/v1.28/containers/${id}/json`)).body.toString()).State;

  test('kill?signal=TERM ends sleep with 143', async () => {
    const { socket, id } = await run(['sleep', '30']);
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/kill?signal=TERM`)).status).toBe(204);
    const wait = JSON.parse((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/wait`)).body.toString());
    expect(wait.StatusCode).toBe(143);
  });
  test('stop?t=1 of a child that ignores SIGTERM sends SIGKILL after the timeout (137)', async () => {
    const { socket, id } = await run(['sh', '-c', 'trap "" TERM; sleep 30']);
    await new Promise((resolve) => setTimeout(resolve, 100)); // let the shell install its trap
    const began = Date.now();
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/stop?t=1`)).status).toBe(204);
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
    expect(await inspect(socket, id)).toMatchObject({ Status: 'exited', ExitCode: 137 });
  });
  test('a stop timeout longer than a timer can hold waits for the exit, never SIGKILLs at once', async () => {
    const { socket, id } = await run(['sh', '-c', 'trap "" TERM; sleep 1; exit 5']);
    await new Promise((resolve) => setTimeout(resolve, 100)); // let the shell install its trap
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/stop?t=4294968`)).status).toBe(204);
    expect(await inspect(socket, id)).toMatchObject({ Status: 'exited', ExitCode: 5 });
  });
  test('stop of a child that exits on SIGTERM answers without waiting for the timeout', async () => {
    const { socket, id } = await run(['sleep', '30']);
    const began = Date.now();
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/stop?t=20`)).status).toBe(204);
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(await inspect(socket, id)).toMatchObject({ Status: 'exited', ExitCode: 143 });
  });
});
