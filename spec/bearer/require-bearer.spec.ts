import { describe, expect, test } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { bearerGuard, requireBearer } from '../../lib/bearer/index.js';
import { parseChallenge } from '../../lib/client/registry/index.js';
import { protectedApp, REALM, SERVICE, sign, tokens } from './support.js';

const app = protectedApp();
const pullDetail = [{ Type: 'repository', Class: '', Name: 'alice/app', Action: 'pull' }];

describe('no token: 401 with a challenge without error, as registries answer', () => {
  test('status, challenge with realm, service and scope, registry error body as exactly application/json', async () => {
    const res = await request(app).get('/v2/alice/app/tags/list');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="${REALM}",service="${SERVICE}",scope="repository:alice/app:pull"`);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({ errors: [{ code: 'UNAUTHORIZED', message: 'authentication required', detail: pullDetail }] });
  });
  test('the /v2/ base check requires no scope: the challenge has none', async () => {
    const res = await request(app).get('/v2/');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="${REALM}",service="${SERVICE}"`);
    expect(res.body.errors[0].detail).toEqual([]);
  });
  test.each(['Basic YWxpY2U6cHc=', 'Bearer  two-spaces', 'Token abc'])('an Authorization header of another form (%j) counts as no token', async (header) => {
    const res = await request(app).get('/v2/').set('Authorization', header);
    expect(res.status).toBe(401);
    expect(parseChallenge(res.headers['www-authenticate'])?.error).toBeUndefined();
  });
});

describe('an invalid token: 401 error="invalid_token"', () => {
  test('garbage, and a JWT-shaped string that is not one', async () => {
    for (const header of ['Bearer not-a-jwt', 'Bearer a.b.c']) {
      const res = await request(app).get('/v2/alice/app/tags/list').set('Authorization', header);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Bearer realm="${REALM}",service="${SERVICE}",scope="repository:alice/app:pull",error="invalid_token"`);
      expect(res.body).toEqual({ errors: [{ code: 'UNAUTHORIZED', message: 'invalid token', detail: pullDetail }] });
    }
  });
});

describe('the access claim must cover every required action: otherwise 401 error="insufficient_scope"', () => {
  test('a pull token on a pull,push route', async () => {
    const res = await request(app).put('/v2/alice/app/manifests/1').set('Authorization', `Bearer ${await sign()}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="${REALM}",service="${SERVICE}",scope="repository:alice/app:pull,push",error="insufficient_scope"`);
    expect(res.body.errors[0]).toEqual({ code: 'UNAUTHORIZED', message: 'insufficient scope', detail: [...pullDetail, { ...pullDetail[0], Action: 'push' }] });
  });
  test('a token for another repository', async () => {
    const res = await request(app).get('/v2/bob/app/tags/list').set('Authorization', `Bearer ${await sign()}`);
    expect(res.status).toBe(401);
    expect(parseChallenge(res.headers['www-authenticate'])).toMatchObject({ error: 'insufficient_scope', scopes: ['repository:bob/app:pull'] });
  });
  test('a granted * covers push; a required registry:catalog:* needs a granted *', async () => {
    const star = await sign({ claims: { access: [{ type: 'repository', name: 'alice/app', actions: ['*'] }, { type: 'registry', name: 'catalog', actions: ['*'] }] } });
    expect((await request(app).put('/v2/alice/app/manifests/1').set('Authorization', `Bearer ${star}`)).status).toBe(201);
    expect((await request(app).get('/catalog').set('Authorization', `Bearer ${star}`)).status).toBe(200);
    const partial = await sign({ claims: { access: [{ type: 'registry', name: 'catalog', actions: ['pull'] }] } });
    expect((await request(app).get('/catalog').set('Authorization', `Bearer ${partial}`)).status).toBe(401);
  });
  test('requireBearer([]) accepts any valid token, even one with empty access (the docker login check)', async () => {
    const res = await request(app).get('/v2/').set('Authorization', `Bearer ${await sign({ claims: { access: [], sub: '' } })}`);
    expect(res.status).toBe(200);
  });
});

describe('on success the handler sees the verified subject and access', () => {
  test('bearerOf(req) and req.bearer', async () => {
    const token = await sign({ claims: { access: [{ type: 'registry', name: 'catalog', actions: ['*'] }] } });
    const res = await request(app).get('/catalog').set('Authorization', `bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body.access).toEqual([{ type: 'registry', name: 'catalog', actions: ['*'] }]);
    const tags = await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${await sign()}`);
    expect(tags.body).toEqual({ name: 'alice/app', tags: ['1'], subject: 'alice' });
  });
  test('a host:port name and a class in a fixed scope are understood', async () => {
    const direct = express().get('/x', requireBearer('repository(plugin):localhost:5000/alice/app:pull', { realm: REALM, keys: tokens }), (_q, r) => {
      r.json({});
    });
    const token = await sign({ claims: { access: [{ type: 'repository', name: 'localhost:5000/alice/app', actions: ['pull'] }] } });
    expect((await request(direct).get('/x').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });
});

describe('a scope built from request data is validated by the grammar: never a broken header, never a 500', () => {
  test.each([
    ['quote and comma trying to add a parameter', '/v2/alice/a%22,error=%22x/tags/list'],
    ['CR LF trying to add a header', '/v2/alice/a%0d%0aSet-Cookie:%20x=1/tags/list'],
    ['space trying to add a second scope', '/v2/alice/app:pull%20registry:catalog/tags/list'],
    ['upper case', '/v2/Alice/App/tags/list'],
    ['backslash', '/v2/alice/a%5c/tags/list'],
    ['colon trying to change the actions', '/v2/alice/app:push,pull/tags/list'],
  ])('%s → 400 NAME_INVALID, no challenge', async (_why, path) => {
    const res = await request(app).get(path).set('Authorization', `Bearer ${await sign()}`);
    expect(res.status).toBe(400);
    expect(res.headers['www-authenticate']).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body.errors[0]).toMatchObject({ code: 'NAME_INVALID', message: 'invalid repository name' });
  });
  test('a scope function that throws something else goes to the host error handler', async () => {
    const guard = bearerGuard({ realm: REALM, keys: tokens });
    const hostApp = express();
    hostApp.get('/x', guard(() => {
      throw new Error('host bug');
    }));
    hostApp.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).json({ seen: err.message });
    });
    expect((await request(hostApp).get('/x')).body).toEqual({ seen: 'host bug' });
  });
  test('a fixed scope outside the grammar is refused at construction', () => {
    const guard = bearerGuard({ realm: REALM, keys: tokens });
    expect(() => guard('repository:A:pull')).toThrow('invalid resource name');
    expect(() => guard(42 as unknown as string)).toThrow(TypeError);
  });
});
