/**
 * The token side grants what the engine checks: an ACL rule gives every signed-in account the
 * engine as a tenant (engine:api:read,write) and the administrators an `admin` action on the same
 * resource. Real tokens from tokenRouter, verified by bearerGuard, in front of engineRouter.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import type { Request } from 'express';
import request from 'supertest';
import { aclAuthorizer, bearerGuard } from '../../../lib/index.js';
import { writeEngineAuthError } from '../../../lib/engine/index.js';
import { engineRouter, OWNER_LABEL, tenancyPolicy } from '../../../lib/engine/index.js';
import { SERVICE, basic, claimsOf, tokenApp } from '../../support/token-fixture.js';
import { policyRuntime } from './support.js';

const runtime = policyRuntime();
afterAll(() => runtime.close?.());

const { app, router } = tokenApp({
  authorize: aclAuthorizer([
    { comment: 'administrators of the engine', match: { account: 'alice', type: 'engine', name: 'api' }, actions: ['read', 'write', 'admin'] },
    { comment: 'every signed-in account is a tenant', match: { account: '/.+/', type: 'engine', name: 'api' }, actions: ['read', 'write'] },
  ]),
});
const guard = bearerGuard({ realm: 'http://127.0.0.1/token', keys: router });
const scopeOf = (req: Request) => `engine:api:${req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write'}`;
// The default administrator predicate: a token granted engine:api:admin.
app.use('/engine', guard(scopeOf, { writeError: writeEngineAuthError }), engineRouter(runtime, '1.24-1.43', { policy: tenancyPolicy() }));

async function tokenFor(user: string, password: string, actions: string): Promise<string> {
  const res = await request(app).get(`/token?service=${SERVICE}&scope=engine:api:${actions}`).set('Authorization', basic(user, password));
  expect(res.status).toBe(200);
  return res.body.token as string;
}

const engine = (token: string) => ({
  get: (path: string) => request(app).get(`/engine${path}`).set('Authorization', `Bearer ${token}`),
  post: (path: string) => request(app).post(`/engine${path}`).set('Authorization', `Bearer ${token}`),
});

describe('an ACL rule grants tenancy (engine:api:read,write) and administration (engine:api:admin)', () => {
  test('bob asking for admin gets only read,write: the token says so, and he stays a tenant', async () => {
    const token = await tokenFor('bob', 'builder', 'read,write,admin');
    expect(claimsOf(token).access).toEqual([{ type: 'engine', name: 'api', actions: ['read', 'write'] }]);
    const created = await engine(token).post('/v1.41/containers/create').send({ Image: 'busybox' });
    expect(created.status).toBe(201);
    expect((await engine(token).get(`/v1.41/containers/${created.body.Id}/json`)).body.Config.Labels).toEqual({ [OWNER_LABEL]: 'bob' });
    const privileged = await engine(token).post('/v1.41/containers/create').send({ Image: 'busybox', HostConfig: { Privileged: true } });
    expect(privileged.status).toBe(403);
  });

  test('alice with a tenant token (no admin asked) cannot see bob\'s container; with engine:api:admin she can, and may run --privileged', async () => {
    const bob = await tokenFor('bob', 'builder', 'read,write');
    const id = (await engine(bob).post('/v1.41/containers/create').send({ Image: 'busybox' })).body.Id as string;

    const tenant = await tokenFor('alice', 'wonderland', 'read,write');
    expect((await engine(tenant).get(`/v1.41/containers/${id}/json`)).body).toEqual({ message: `No such container: ${id}` });

    const adminToken = await tokenFor('alice', 'wonderland', 'read,write,admin');
    expect(claimsOf(adminToken).access).toEqual([{ type: 'engine', name: 'api', actions: ['read', 'write', 'admin'] }]);
    expect((await engine(adminToken).get(`/v1.41/containers/${id}/json`)).status).toBe(200);
    expect((await engine(adminToken).post('/v1.41/containers/create').send({ Image: 'busybox', HostConfig: { Privileged: true } })).status).toBe(201);
  });
});
