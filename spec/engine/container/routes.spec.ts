import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { testApp, testRuntime } from '../helpers.js';

const frames = (body: Buffer): [number, string][] => new FrameDecoder().push(body).map((f) => [f.stream, f.payload.toString()]);
const binary = (res: request.Response, cb: (e: Error | null, b: Buffer) => void): void => {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
};

async function created(app: ReturnType<typeof testApp>, body: object, name?: string): Promise<string> {
  const res = await request(app).post(`/v1.28/containers/create${name ? `?name=${name}` : ''}`).send(body);
  expect(res.status).toBe(201);
  return res.body.Id as string;
}

describe('POST /containers/create', () => {
  const app = testApp(testRuntime().runtime);
  test('201 {"Id", "Warnings": null} with Content-Type exactly application/json', async () => {
    const res = await request(app).post('/v1.28/containers/create?name=web').send({ Image: 'busybox', Cmd: ['echo', 'hi'] });
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({ Id: expect.stringMatching(/^[0-9a-f]{64}$/), Warnings: null });
  });
  test('an unknown image is 404 "No such image: <familiar ref>" (clients pull on it)', async () => {
    const res = await request(app).post('/v1.28/containers/create').send({ Image: 'nope', Cmd: ['x'] });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'No such image: nope:latest' });
  });
  test('a name in use is 409 with dockerd\'s message', async () => {
    const id = await created(app, { Image: 'busybox', Cmd: ['a'] }, 'taken');
    const res = await request(app).post('/v1.28/containers/create?name=taken').send({ Image: 'busybox', Cmd: ['a'] });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe(`Conflict. The container name "/taken" is already in use by container "${id}". You have to remove (or rename) that container to be able to reuse that name.`);
  });
  test('an invalid name is 400', async () => {
    const res = await request(app).post('/v1.28/containers/create?name=-bad').send({ Image: 'busybox', Cmd: ['a'] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Invalid container name (-bad), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed');
  });
  test('malformed JSON is 400, never 500', async () => {
    const res = await request(app).post('/v1.28/containers/create').set('Content-Type', 'application/json').send('{bad');
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^invalid JSON in request body/);
  });
  test('a non-JSON Content-Type is 400 naming it', async () => {
    const res = await request(app).post('/v1.28/containers/create').set('Content-Type', 'text/plain').send('{}');
    expect(res.status).toBe(400);
    expect(res.body.message).toBe("Content-Type specified (text/plain) must be 'application/json'");
  });
  test('an empty body, a non-object or no Image is 400 "Config cannot be empty"', async () => {
    for (const body of [undefined, '[]', '"x"', '{}']) {
      const req = request(app).post('/v1.28/containers/create').set('Content-Type', 'application/json');
      const res = await (body === undefined ? req : req.send(body));
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('Config cannot be empty in order to create a container');
    }
  });
  test('no command at all is 400 "No command specified"', async () => {
    const res = await request(testApp(testRuntime().runtime)).post('/v1.28/containers/create').send({ Image: 'busybox', Entrypoint: [], Cmd: [] });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('No command specified');
  });
  test('dockerode-style extra query parameters are ignored', async () => {
    const res = await request(app).post('/v1.28/containers/create?Image=busybox&HostConfig=%7B%7D').send({ Image: 'busybox', Cmd: ['a'] });
    expect(res.status).toBe(201);
  });
});

describe('ids resolve by full id, unique prefix or name; unknown → 404', () => {
  const app = testApp(testRuntime().runtime);
  test('inspect by id, prefix, name and /name', async () => {
    const id = await created(app, { Image: 'busybox', Cmd: ['echo', 'x'] }, 'named');
    for (const ref of [id, id.slice(0, 12), 'named']) {
      const res = await request(app).get(`/v1.28/containers/${ref}/json`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ Id: id, Name: '/named', State: { Status: 'created', Running: false }, Config: { Tty: false }, HostConfig: { LogConfig: { Type: 'json-file' } } });
    }
  });
  test('unknown → 404 "No such container: x" on every container route', async () => {
    for (const [method, path] of [['get', '/json'], ['post', '/start'], ['post', '/wait'], ['get', '/logs?stdout=1'], ['delete', '']] as const) {
      const res = await request(app)[method](`/v1.28/containers/ghost${path}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'No such container: ghost' });
    }
  });
  test('at API <= 1.23 the same error is plain text', async () => {
    const res = await request(app).get('/v1.23/containers/ghost/json');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('No such container: ghost\n');
  });
});

describe('start, wait, logs, list, remove', () => {
  test('start → 204, wait → {"StatusCode","Error"}, logs multiplexed per stream', async () => {
    const app = testApp(testRuntime().runtime);
    const id = await created(app, { Image: 'fail:1' });
    expect((await request(app).post(`/v1.28/containers/${id}/start`)).status).toBe(204);
    const wait = await request(app).post(`/v1.28/containers/${id}/wait`);
    expect(wait.status).toBe(200);
    expect(wait.headers['content-type']).toBe('application/json');
    expect(wait.body).toEqual({ StatusCode: 3, Error: null });
    const both = await request(app).get(`/v1.28/containers/${id}/logs?stdout=1&stderr=1`).buffer(true).parse(binary);
    expect(both.status).toBe(200);
    expect(both.headers['content-type']).toBeUndefined();
    expect(frames(both.body as Buffer)).toEqual([[1, 'out\n'], [2, 'err\n']]);
    const errOnly = await request(app).get(`/v1.28/containers/${id}/logs?stderr=true`).buffer(true).parse(binary);
    expect(frames(errOnly.body as Buffer)).toEqual([[2, 'err\n']]);
  });
  test('logs without a stream is 400 "Bad parameters: you must choose at least one stream"', async () => {
    const app = testApp(testRuntime().runtime);
    const id = await created(app, { Image: 'busybox', Cmd: ['echo'] });
    const res = await request(app).get(`/v1.28/containers/${id}/logs?stdout=0&stderr=no`);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('Bad parameters: you must choose at least one stream');
  });
  test('logs with a TTY are raw bytes; from 1.42 Content-Type names the stream kind', async () => {
    const app = testApp(testRuntime().runtime, '1.12-1.43');
    const tty = await created(app, { Image: 'busybox', Cmd: ['echo', 'raw'], Tty: true });
    await request(app).post(`/v1.28/containers/${tty}/start`);
    await request(app).post(`/v1.28/containers/${tty}/wait`);
    const raw = await request(app).get(`/v1.42/containers/${tty}/logs?stdout=1`).buffer(true).parse(binary);
    expect((raw.body as Buffer).toString()).toBe('raw\n');
    expect(raw.headers['content-type']).toBe('application/vnd.docker.raw-stream');
    const mux = await created(app, { Image: 'busybox', Cmd: ['echo', 'm'] });
    await request(app).post(`/v1.28/containers/${mux}/start`);
    await request(app).post(`/v1.28/containers/${mux}/wait`);
    const res = await request(app).get(`/v1.42/containers/${mux}/logs?stdout=1`).buffer(true).parse(binary);
    expect(res.headers['content-type']).toBe('application/vnd.docker.multiplexed-stream');
  });
  test('tail and timestamps', async () => {
    const app = testApp(testRuntime().runtime);
    const id = await created(app, { Image: 'busybox', Cmd: ['echo', 'a\nb\nc'] });
    await request(app).post(`/v1.28/containers/${id}/start`);
    await request(app).post(`/v1.28/containers/${id}/wait`);
    const tail = await request(app).get(`/v1.28/containers/${id}/logs?stdout=1&tail=2`).buffer(true).parse(binary);
    // One frame per line, as dockerd's json-file gives them.
    expect(frames(tail.body as Buffer)).toEqual([[1, 'b\n'], [1, 'c\n']]);
    const stamped = await request(app).get(`/v1.28/containers/${id}/logs?stdout=1&timestamps=1&tail=1`).buffer(true).parse(binary);
    expect(frames(stamped.body as Buffer)[0]![1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z c\n$/);
    const future = await request(app).get(`/v1.28/containers/${id}/logs?stdout=1&since=${Math.floor(Date.now() / 1000) + 60}`).buffer(true).parse(binary);
    expect((future.body as Buffer).length).toBe(0);
    const bad = await request(app).get(`/v1.28/containers/${id}/logs?stdout=1&since=soon`);
    expect(bad.status).toBe(400);
  });
  test('start of a running container is 304 without a body; remove of a running one is 409; force works', async () => {
    const { runtime, release } = testRuntime();
    const app = testApp(runtime);
    const id = await created(app, { Image: 'slow:1' }, 'slowpoke');
    expect((await request(app).post(`/v1.28/containers/${id}/start`)).status).toBe(204);
    const again = await request(app).post(`/v1.28/containers/${id}/start`);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    const running = await request(app).get('/v1.28/containers/json');
    expect(running.body.map((c: { Names: string[] }) => c.Names)).toEqual([['/slowpoke']]);
    expect(running.body[0]).toMatchObject({ State: 'running', Image: 'slow:1' });
    const rm = await request(app).delete(`/v1.28/containers/${id}`);
    expect(rm.status).toBe(409);
    expect(rm.body.message).toBe(`You cannot remove a running container ${id}. Stop the container before attempting removal or force remove`);
    expect((await request(app).delete(`/v1.28/containers/${id}?force=1`)).status).toBe(204);
    expect((await request(app).get(`/v1.28/containers/${id}/json`)).status).toBe(404);
    release();
  });
  test('list: running only by default, all=1, filters, and bad filters are 400', async () => {
    const app = testApp(testRuntime().runtime);
    await created(app, { Image: 'busybox', Cmd: ['x'] }, 'one');
    expect((await request(app).get('/v1.28/containers/json')).body).toEqual([]);
    const all = await request(app).get('/v1.28/containers/json?all=1');
    expect(all.body).toHaveLength(1);
    expect(all.body[0]).toMatchObject({ Names: ['/one'], State: 'created', Status: 'Created', Command: 'x' });
    const filtered = await request(app).get(`/v1.28/containers/json?all=1&filters=${encodeURIComponent('{"name":{"other":true}}')}`);
    expect(filtered.body).toEqual([]);
    expect((await request(app).get('/v1.28/containers/json?filters=%7Bbad')).status).toBe(400);
    expect((await request(app).get('/v1.28/containers/json?limit=abc')).status).toBe(400);
  });
  test('list: the label filter matches own labels only (key, or key=value), never inherited names', async () => {
    const app = testApp(testRuntime().runtime);
    await created(app, { Image: 'busybox', Cmd: ['x'], Labels: { team: 'a' } }, 'labelled');
    await created(app, { Image: 'busybox', Cmd: ['x'] }, 'plain');
    const names = async (filters: object) => ((await request(app).get(`/v1.28/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify(filters))}`)).body as { Names: string[] }[]).map((c) => c.Names[0]);
    expect(await names({ label: { team: true } })).toEqual(['/labelled']);
    expect(await names({ label: { 'team=a': true } })).toEqual(['/labelled']);
    expect(await names({ label: { 'team=b': true } })).toEqual([]);
    expect(await names({ label: { constructor: true } })).toEqual([]);
    expect(await names({ label: { 'toString=x': true } })).toEqual([]);
  });
  test('wait: condition counts from 1.30; unknown ones are ignored before 1.42 and 400 from 1.42', async () => {
    const app = testApp(testRuntime().runtime, '1.12-1.43');
    const id = await created(app, { Image: 'busybox', Cmd: ['x'] });
    expect((await request(app).post(`/v1.41/containers/${id}/wait?condition=bogus`)).body).toEqual({ StatusCode: 0, Error: null });
    const bad = await request(app).post(`/v1.42/containers/${id}/wait?condition=bogus`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('invalid condition: "bogus"');
  });
  test('start with a body is 400 from API 1.24', async () => {
    const app = testApp(testRuntime().runtime);
    const id = await created(app, { Image: 'busybox', Cmd: ['x'] });
    const res = await request(app).post(`/v1.28/containers/${id}/start`).send({ HostConfig: { Privileged: true } });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('starting container with non-empty request body was deprecated since API v1.22 and removed in v1.24');
  });
});

describe('local runtimes keep at most maxContainers: a create beyond it is 409 until some are removed', () => {
  test('the limit holds and frees up on remove', async () => {
    const { scriptedRuntime } = await import('../../../lib/engine/runtime/scripted/index.js');
    const app = testApp(scriptedRuntime({ images: { 'busybox:latest': () => ({}) }, maxContainers: 2 }));
    const first = await request(app).post('/v1.28/containers/create').send({ Image: 'busybox', Cmd: ['x'] });
    expect((await request(app).post('/v1.28/containers/create').send({ Image: 'busybox', Cmd: ['x'] })).status).toBe(201);
    const refused = await request(app).post('/v1.28/containers/create').send({ Image: 'busybox', Cmd: ['x'] });
    expect(refused.status).toBe(409);
    expect(refused.headers['content-type']).toBe('application/json');
    expect(refused.body).toEqual({ message: 'too many containers (2); remove some before creating more' });
    expect((await request(app).delete(`/v1.28/containers/${first.body.Id}`)).status).toBe(204);
    expect((await request(app).post('/v1.28/containers/create').send({ Image: 'busybox', Cmd: ['x'] })).status).toBe(201);
  });
  test('limits are validated at construction, for both local runtimes', async () => {
    const { scriptedRuntime } = await import('../../../lib/engine/runtime/scripted/index.js');
    const { processRuntime } = await import('../../../lib/engine/runtime/process/index.js');
    expect(() => scriptedRuntime({ images: { a: () => ({}) }, maxContainers: 0 })).toThrow(/scriptedRuntime option "maxContainers"/);
    expect(() => scriptedRuntime({ images: { a: () => ({}) }, maxLogBytes: 10 })).toThrow(/scriptedRuntime option "maxLogBytes"/);
    expect(() => processRuntime({ images: { a: { program: '/bin/true' } }, maxContainers: 1.5 })).toThrow(/processRuntime option "maxContainers"/);
  });
});
