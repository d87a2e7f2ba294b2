import { afterAll, describe, expect, test } from '@jest/globals';
import express, { type Router } from 'express';
import request from 'supertest';
import {
  ENGINE_ACTION_NAMES, ENGINE_ACTIONS, allow, callerFromBearer, composePolicies, engineRouter, refuse, type EngineAction, type PolicyRequest,
} from '../../../lib/engine/index.js';
import { as, callerFromHeader, containerOf, policyApp, policyRuntime } from './support.js';

const runtime = policyRuntime();
afterAll(() => runtime.close?.());

interface RouteLayer { route?: { path: string | RegExp; methods: Record<string, boolean> }; handle?: { stack?: RouteLayer[] } }

/** Every (method, path) the engine router registers, found by walking Express's own route table. */
function registeredRoutes(router: Router): { method: string; path: string | RegExp }[] {
  const out: { method: string; path: string | RegExp }[] = [];
  const walk = (stack: RouteLayer[]): void => {
    for (const layer of stack) {
      if (layer.route) for (const method of Object.keys(layer.route.methods)) out.push({ method, path: layer.route.path });
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((router as unknown as { stack: RouteLayer[] }).stack);
  // The api router is mounted twice (versioned and unversioned): the same routes, once each.
  return out.filter((r, i) => out.findIndex((o) => o.method === r.method && String(o.path) === String(r.path)) === i);
}

/** A concrete request path for a route pattern (`:id` → x, `(.+)` → x). */
function samplePath(path: string | RegExp): string {
  if (typeof path === 'string') return path.replace(/:[a-z]+/g, 'x');
  if (path.source === '.*') return '/anything';
  return path.source.replace(/^\^/, '').replace(/\$$/, '').replace('(.+)', 'x').replace(/\\\//g, '/');
}

describe('every engine route passes the policy checkpoint under one stable action name', () => {
  const seen: EngineAction[] = [];
  const refuseAll = (req: PolicyRequest) => {
    seen.push(req.action);
    return refuse(`refused ${req.action}`);
  };
  const router = engineRouter(runtime, '1.24-1.43', { policy: refuseAll });
  const app = express().use(router);
  const routes = registeredRoutes(router);

  test('the router registers routes (the walk found them)', () => {
    expect(routes.length).toBeGreaterThanOrEqual(ENGINE_ACTION_NAMES.length);
  });

  test('a policy refusing everything gets a 403 {"message"} from every route, none bypasses it', async () => {
    for (const { method, path } of routes) {
      const url = `/v1.41${samplePath(path)}${samplePath(path).includes('?') ? '' : '?path=/&fromImage=busybox&repo=bob/x'}`;
      const call = (request(app) as unknown as Record<string, (u: string) => request.Test>)[method]!(url);
      // docker load's body is an archive (an empty tar: two zero blocks), every other body JSON: one
      // that decodes as a container create and as an exec create alike (both are decoded, once,
      // before the checkpoint, so that the policy judges the typed spec).
      const res = String(path) === '/images/load'
        ? await call.set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024))
        : await call.set('Content-Type', 'application/json').send(method === 'get' || method === 'head' ? undefined : '{"Image":"busybox","Cmd":["x"]}');
      expect({ method, path: String(path), status: res.status }).toEqual({ method, path: String(path), status: 403 });
      if (method !== 'head') expect(res.body).toEqual({ message: expect.stringMatching(/^refused [a-z.]+$/) });
    }
    // docker import shares the pull's path: fromSrc without fromImage is image.import.
    const imported = await request(app).post('/v1.41/images/create?fromSrc=-&repo=bob/x').set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024));
    expect({ status: imported.status, body: imported.body }).toEqual({ status: 403, body: { message: 'refused image.import' } });
  });

  test('the actions asked are exactly the documented ENGINE_ACTIONS, each with its route', () => {
    expect([...new Set(seen)].sort()).toEqual([...ENGINE_ACTION_NAMES].sort());
    for (const name of ENGINE_ACTION_NAMES) expect(ENGINE_ACTIONS[name].route).toMatch(/^[A-Z|]+ [/*]/);
  });
});

describe('the policy is asked with the action, the caller, the resolved target and the create\'s typed spec', () => {
  test('create: the spec decoded once (no raw body); a container route: the full id and owner of the reference sent', async () => {
    const asked: PolicyRequest[] = [];
    const app = policyApp(runtime, (req) => {
      asked.push(req);
      return allow();
    });
    const id = await containerOf(app, 'alice', { name: 'probe' });
    const create = asked.find((r) => r.action === 'container.create')!;
    expect(create.caller).toEqual({ subject: 'alice', claims: {}, access: [] });
    expect(create.body).toBeUndefined();
    expect(create.spec).toMatchObject({ image: 'busybox', cmd: ['sleep'], host: { networkMode: '', binds: [] } });
    expect(create.runtime).toBe('scripted');
    await as(app, 'alice').get('/v1.41/containers/probe/json');
    expect(asked.at(-1)).toMatchObject({ action: 'container.inspect', target: { kind: 'container', ref: 'probe', id, owner: 'alice' } });
    await as(app, 'alice').get('/v1.41/containers/nothing-here/json');
    expect(asked.at(-1)).toMatchObject({ action: 'container.inspect', target: { kind: 'container', ref: 'nothing-here' } });
    expect(asked.at(-1)!.target).not.toHaveProperty('id');
    await as(app, 'alice').post('/v1.41/images/busybox/tag?repo=alice/box&tag=1');
    expect(asked.at(-1)).toMatchObject({ action: 'image.tag', target: { kind: 'image', ref: 'busybox' }, images: ['alice/box:1'] });
  });

  test('import: the source fromSrc names (the body, or the URL normalized as the route fetches it); none for a malformed fromSrc, the route\'s own 400', async () => {
    const asked: PolicyRequest[] = [];
    const app = policyApp(runtime, (req) => (asked.push(req), allow()));
    await as(app, 'alice').post('/v1.41/images/create?fromSrc=-&repo=alice/x').set('Content-Type', 'application/x-tar').send(Buffer.alloc(1024));
    expect(asked.at(-1)).toMatchObject({ action: 'image.import', source: { kind: 'body' }, images: ['alice/x:latest'] });
    await as(app, 'alice').post('/v1.41/images/create?fromSrc=HTTP://Example.COM:80/x.tar');
    expect(asked.at(-1)).toMatchObject({ action: 'image.import', source: { kind: 'url', url: 'http://example.com/x.tar' } });
    await as(app, 'alice').post('/v1.41/images/create?fromSrc=ftp://example.com/x.tar');
    expect(asked.at(-1)!.action).toBe('image.import');
    expect(asked.at(-1)).not.toHaveProperty('source');
    await as(app, 'alice').post('/v1.41/images/create?fromImage=alice/y&tag=1');
    expect(asked.at(-1)!.action).toBe('image.pull');
    expect(asked.at(-1)).not.toHaveProperty('source');
  });

  test('a refusal is a 403 in the engine\'s {"message"} shape, before the runtime acts', async () => {
    const app = policyApp(runtime, ({ action }) => (action === 'container.create' ? refuse('no containers on Fridays') : allow()));
    const before = (await as(app, 'alice').get('/v1.41/containers/json?all=1')).body.length;
    const res = await as(app, 'alice').post('/v1.41/containers/create').send({ Image: 'busybox' });
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ message: 'no containers on Fridays' });
    expect((await as(app, 'alice').get('/v1.41/containers/json?all=1')).body.length).toBe(before);
  });

  test('composePolicies: the first refusal answers', async () => {
    const app = policyApp(runtime, composePolicies(() => allow(), () => refuse('second says no'), () => refuse('third says no')));
    expect((await as(app, 'alice').get('/v1.41/info')).body).toEqual({ message: 'second says no' });
  });

  test('without a caller option the caller comes from req.bearer (anonymous without one)', async () => {
    const asked: PolicyRequest[] = [];
    const app = express().use(engineRouter(runtime, '1.24-1.43', { policy: (req) => (asked.push(req), allow()) }));
    await request(app).get('/v1.41/_ping');
    expect(asked[0]!.caller).toEqual({ claims: {}, access: [] });
    const withBearer = express().use((req, _res, next) => {
      req.bearer = { subject: 'alice', access: [{ type: 'engine', name: 'api', actions: ['read'] }], expiresAt: new Date(), claims: { sub: 'alice', groups: ['x'] } };
      next();
    }, engineRouter(runtime, '1.24-1.43', { policy: (req) => (asked.push(req), allow()) }));
    await request(withBearer).get('/v1.41/_ping');
    expect(asked[1]!.caller).toEqual({ subject: 'alice', claims: { sub: 'alice', groups: ['x'] }, access: [{ type: 'engine', name: 'api', actions: ['read'] }] });
    expect(callerFromBearer).toBeInstanceOf(Function);
  });

  test('the options are checked at construction', () => {
    expect(() => engineRouter(runtime, undefined, { policy: 'strict' as never })).toThrow(/"policy" must be a function/);
    expect(() => engineRouter(runtime, undefined, { policy: () => allow(), caller: {} as never })).toThrow(/"caller" must be a function/);
    expect(() => composePolicies(undefined as never)).toThrow(TypeError);
    expect(callerFromHeader).toBeInstanceOf(Function);
  });
});
