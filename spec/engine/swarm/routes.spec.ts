import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { testApp, testRuntime } from '../helpers.js';

// dockgate has no swarm mode: every node answers the swarm routes as dockerd 20.10 does when it
// is not in a swarm (each answer below was read from dockerd on this machine).
const app = testApp(testRuntime().runtime, '1.12-1.43');
const NOT_MANAGER = 'This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.';

describe('swarm routes on a node outside a swarm answer 503 with dockerd\'s message', () => {
  const reads: [string, string][] = [
    ['get', '/swarm'], ['get', '/swarm/unlockkey'],
    ['get', '/nodes'], ['get', '/nodes/n1'], ['delete', '/nodes/n1'],
    ['get', '/services'], ['get', '/services/s1'], ['delete', '/services/s1'], ['get', '/services/s1/logs?stdout=1'],
    ['get', '/tasks'], ['get', '/tasks/t1'], ['get', '/tasks/t1/logs?stderr=1'],
    ['get', '/secrets'], ['get', '/secrets/x'], ['delete', '/secrets/x'],
    ['get', '/configs'], ['get', '/configs/x'], ['delete', '/configs/x'],
  ];
  test.each(reads)('%s %s', async (method, path) => {
    const res = await request(app)[method as 'get'](`/v1.41${path}`);
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({ message: NOT_MANAGER });
  });
  const writes: string[] = ['/swarm/update?version=1', '/swarm/unlock', '/nodes/n1/update?version=1', '/services/create', '/services/s1/update?version=1', '/secrets/create', '/secrets/x/update?version=1', '/configs/create', '/configs/x/update?version=1'];
  test.each(writes)('POST %s with a JSON body', async (path) => {
    const res = await request(app).post(`/v1.41${path}`).send({});
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ message: NOT_MANAGER });
  });
  test('without a version prefix too, and in plain text below API 1.24 (as dockerd\'s errors are)', async () => {
    expect((await request(app).get('/nodes')).body).toEqual({ message: NOT_MANAGER });
    const old = await request(app).get('/v1.18/swarm');
    expect(old.status).toBe(503);
    expect(old.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(old.text).toBe(`${NOT_MANAGER}\n`);
  });
});

describe('POST /swarm/leave is 503 "This node is not part of a swarm", forced or not', () => {
  test.each(['/swarm/leave', '/swarm/leave?force=1'])('%s', async (path) => {
    const res = await request(app).post(`/v1.41${path}`);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ message: 'This node is not part of a swarm' });
  });
});

describe('swarm init and join are refused 501: dockgate has no swarm mode', () => {
  test.each([['init', 'docker swarm init'], ['join', 'docker swarm join']])('/swarm/%s names the command and the runtime', async (route, command) => {
    const res = await request(app).post(`/v1.41/swarm/${route}`).send({ ListenAddr: '0.0.0.0:2377' });
    expect(res.status).toBe(501);
    expect(res.body).toEqual({ message: `${command}: swarm mode is not supported by dockgate (the scripted runtime has no swarm)` });
  });
});

describe('the request is checked before the swarm, as dockerd checks it', () => {
  test('a route that takes a body: none is 400 "got EOF while reading request body", a non-object is 400', async () => {
    for (const path of ['/swarm/init', '/swarm/join', '/swarm/unlock', '/services/create', '/secrets/create', '/configs/create', '/swarm/update?version=1']) {
      const empty = await request(app).post(`/v1.41${path}`);
      expect([path, empty.status, empty.body]).toEqual([path, 400, { message: 'got EOF while reading request body' }]);
      const list = await request(app).post(`/v1.41${path}`).send([]);
      expect([path, list.status]).toEqual([path, 400]);
    }
    expect((await request(app).post('/v1.41/services/create').set('Content-Type', 'application/json').send('x')).status).toBe(400);
  });
  test('update without a version is 400 with dockerd\'s strconv.ParseUint message; secrets and configs say "invalid <kind> version"', async () => {
    expect((await request(app).post('/v1.41/swarm/update').send({})).body).toEqual({ message: 'invalid swarm version \'\': strconv.ParseUint: parsing "": invalid syntax' });
    expect((await request(app).post('/v1.41/services/s1/update?version=-1').send({})).body).toEqual({ message: 'invalid service version \'-1\': strconv.ParseUint: parsing "-1": invalid syntax' });
    expect((await request(app).post('/v1.41/nodes/n1/update?version=99999999999999999999').send({})).body).toEqual({
      message: 'invalid node version \'99999999999999999999\': strconv.ParseUint: parsing "99999999999999999999": value out of range',
    });
    expect((await request(app).post('/v1.41/nodes/n1/update?version=18446744073709551615').send({})).status).toBe(503);
    expect((await request(app).post('/v1.41/secrets/x/update').send({})).body).toEqual({ message: 'invalid secret version' });
    expect((await request(app).post('/v1.41/configs/x/update?version=abc').send({})).body).toEqual({ message: 'invalid config version' });
  });
  test('list filters must be JSON (400); their names are the swarm\'s to check, so an unknown one still meets the 503', async () => {
    expect((await request(app).get('/v1.41/services?filters=x')).status).toBe(400);
    const unknown = await request(app).get(`/v1.41/nodes?filters=${encodeURIComponent('{"bogus":{"a":true}}')}`);
    expect(unknown.status).toBe(503);
  });
  test('service and task logs need a stream (400); insertDefaults must be a boolean (400)', async () => {
    const noStream = await request(app).get('/v1.41/services/s1/logs');
    expect(noStream.status).toBe(400);
    expect(noStream.body).toEqual({ message: 'Bad parameters: you must choose at least one stream' });
    expect((await request(app).get('/v1.41/tasks/t1/logs')).status).toBe(400);
    expect((await request(app).get('/v1.41/services/s1?insertDefaults=x')).body).toEqual({ message: 'invalid value for insertDefaults: x' });
    expect((await request(app).get('/v1.41/services/s1?insertDefaults=true')).status).toBe(503);
  });
  test('paths dockerd has no route for stay 404 page not found', async () => {
    expect((await request(app).get('/v1.41/swarm/x')).status).toBe(404);
    expect((await request(app).put('/v1.41/swarm')).status).toBe(404);
  });
});
