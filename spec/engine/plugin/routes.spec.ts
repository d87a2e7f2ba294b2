import { describe, test, expect } from '@jest/globals';
import request from 'supertest';
import { testApp, testRuntime } from '../helpers.js';

// dockgate has no plugin system: every node answers the plugin routes as dockerd 20.10 does on a
// node without plugins (each answer below was read from dockerd on this machine), and refuses
// with 501 what dockerd would carry out by fetching or building a plugin.
const app = testApp(testRuntime().runtime, '1.12-1.43');
const filters = (value: unknown) => `filters=${encodeURIComponent(JSON.stringify(value))}`;

describe('GET /plugins lists no plugins, with its filters checked as dockerd checks them', () => {
  test('an empty JSON array, with and without the accepted filters', async () => {
    for (const path of ['/v1.41/plugins', '/plugins', `/v1.41/plugins?${filters({ capability: ['volumedriver'] })}`, `/v1.41/plugins?${filters({ enabled: ['true'] })}`]) {
      const res = await request(app).get(path);
      expect([path, res.status, res.headers['content-type'], res.body]).toEqual([path, 200, expect.stringMatching(/^application\/json/), []]);
    }
  });
  test('an unknown filter and a non-boolean "enabled" are 400 in dockerd\'s words', async () => {
    const unknown = await request(app).get(`/v1.41/plugins?${filters({ foo: ['x'] })}`);
    expect([unknown.status, unknown.body]).toEqual([400, { message: "Invalid filter 'foo'" }]);
    const enabled = await request(app).get(`/v1.41/plugins?${filters({ enabled: ['x'] })}`);
    expect([enabled.status, enabled.body]).toEqual([400, { message: "Invalid filter 'enabled=[x]'" }]);
    const broken = await request(app).get('/v1.41/plugins?filters={');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/^invalid filters: /);
  });
});

describe('a route about one plugin by name is 404 "plugin NAME not found"', () => {
  const routes: [string, string][] = [
    ['get', '/plugins/sshfs/json'], ['delete', '/plugins/sshfs'], ['post', '/plugins/sshfs/enable'], ['post', '/plugins/sshfs/enable?timeout=0'],
    ['post', '/plugins/sshfs/disable'], ['post', '/plugins/sshfs/push'], ['post', '/plugins/sshfs/set'],
  ];
  test.each(routes)('%s %s', async (method, path) => {
    const res = await request(app)[method as 'get'](`/v1.41${path}`);
    expect([res.status, res.body]).toEqual([404, { message: 'plugin "sshfs" not found' }]);
  });
  test('an enable timeout that is not a number is 400 (dockerd: a 500 with the same words)', async () => {
    const res = await request(app).post('/v1.41/plugins/sshfs/enable?timeout=soon');
    expect([res.status, res.body]).toEqual([400, { message: 'strconv.Atoi: parsing "soon": invalid syntax' }]);
  });
});

describe('installing, creating and upgrading a plugin are refused 501 naming the feature', () => {
  const routes: [string, string, string][] = [
    ['get', '/plugins/privileges?remote=vieux/sshfs', 'installing plugins (GET /plugins/privileges)'],
    ['post', '/plugins/pull?remote=vieux/sshfs', 'installing plugins (POST /plugins/pull, docker plugin install)'],
    ['post', '/plugins/create?name=x', 'creating plugins (POST /plugins/create, docker plugin create)'],
    ['post', '/plugins/sshfs/upgrade?remote=vieux/sshfs', 'upgrading plugins (POST /plugins/{name}/upgrade)'],
  ];
  test.each(routes)('%s %s', async (method, path, what) => {
    const res = await request(app)[method as 'get'](`/v1.41${path}`);
    expect([res.status, res.body]).toEqual([501, { message: `${what} is not supported by dockgate (scripted runtime): it has no plugin system` }]);
  });
});
