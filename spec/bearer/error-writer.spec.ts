import { describe, expect, test } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { bearerGuard } from '../../lib/index.js';
import { engineRouter, writeEngineAuthError } from '../../lib/engine/index.js';
import { scriptedRuntime } from '../../lib/engine/runtime/scripted/index.js';
import { REALM, sign, tokens } from './support.js';

function engineApp() {
  const guard = bearerGuard({ realm: REALM, keys: tokens, writeError: writeEngineAuthError });
  const app = express();
  app.use('/engine', guard((req) => `engine:api:${req.method === 'GET' ? 'read' : 'write'}`),
    engineRouter(scriptedRuntime({ images: { 'busybox:latest': () => ({ exitCode: 0 }) } })));
  return app;
}

describe('a bearer check in front of the engine API answers in the engine error shape, with the same challenge', () => {
  test('no token: 401, the challenge without error, and {"message"} with Content-Type exactly application/json', async () => {
    const res = await request(engineApp()).get('/engine/v1.28/containers/json');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="${REALM}",service="registry.spec",scope="engine:api:read"`);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({ message: 'authentication required' });
  });
  test('a token without the scope: insufficient_scope, still {"message"}', async () => {
    const res = await request(engineApp()).get('/engine/v1.28/containers/json').set('Authorization', `Bearer ${await sign()}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');
    expect(Object.keys(res.body)).toEqual(['message']);
  });
  test('a token with the scope reaches the engine', async () => {
    const token = await sign({ claims: { access: [{ type: 'engine', name: 'api', actions: ['read'] }] } });
    const res = await request(engineApp()).get('/engine/v1.28/containers/json').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
  });
  test('writeError must be a function', () => {
    expect(() => bearerGuard({ realm: REALM, keys: tokens, writeError: 'engine' as never })).toThrow(/writeError/);
  });
});

describe('one guard can write failures in different shapes per route, sharing its cache', () => {
  test('registry shape on one route, engine shape on another', async () => {
    const guard = bearerGuard({ realm: REALM, keys: tokens });
    const app = express();
    app.get('/v2/', guard([]), (_req, res) => { res.json({}); });
    app.get('/engine/_ping', guard('engine:api:read', { writeError: writeEngineAuthError }), (_req, res) => { res.send('OK'); });
    const registry = await request(app).get('/v2/');
    expect(registry.status).toBe(401);
    expect(registry.body.errors[0].code).toBe('UNAUTHORIZED');
    const engine = await request(app).get('/engine/_ping');
    expect(engine.status).toBe(401);
    expect(engine.body).toEqual({ message: 'authentication required' });
    expect(engine.headers['www-authenticate']).toContain('scope="engine:api:read"');
  });
  test('a route writeError must be a function', () => {
    const guard = bearerGuard({ realm: REALM, keys: tokens });
    expect(() => guard([], { writeError: 'engine' as never })).toThrow(/writeError/);
  });
});
