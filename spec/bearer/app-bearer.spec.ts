import { afterEach, describe, expect, jest, test } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { requireBearer } from '../../lib/bearer/index.js';
import { BearerSetupError } from '../../lib/bearer/errors/bearer-setup-error.js';
import { tokenRouter, type TokenOptions } from '../../lib/index.js';
import { authenticate, authorize, basic, ecKey, ISSUER, SERVICE } from '../support/token-fixture.js';

const HOST = 'registry.example:5000';

function tokens(overrides: Partial<TokenOptions> = {}, errors: unknown[] = []) {
  return tokenRouter({
    issuer: ISSUER, service: SERVICE, keys: { privateKey: ecKey.privateKeyPem, certificateChain: ecKey.certificatePem },
    authenticate, authorize, onError: (err) => errors.push(err), ...overrides,
  });
}

async function tokenFrom(app: express.Express, path: string, scope = 'repository:alice/app:pull'): Promise<string> {
  const res = await request(app).get(path).query({ service: SERVICE, scope }).set('Authorization', basic('alice', 'wonderland'));
  expect(res.status).toBe(200);
  return res.body.token as string;
}

const tags = (_req: express.Request, res: express.Response) => { res.json({ name: 'alice/app', tags: ['1'] }); };

describe('requireBearer(scope) with one argument uses the tokenRouter mounted in the same app', () => {
  test('401 with a challenge naming the token route on the request\'s host, then 200 with a token from it', async () => {
    const app = express();
    app.use(tokens());
    app.get('/v2/alice/app/tags/list', requireBearer('repository:alice/app:pull'), tags);
    const refused = await request(app).get('/v2/alice/app/tags/list').set('Host', HOST);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(`Bearer realm="http://${HOST}/token",service="${SERVICE}",scope="repository:alice/app:pull"`);
    expect(refused.body.errors[0].code).toBe('UNAUTHORIZED');
    const token = await tokenFrom(app, '/token');
    const ok = await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`);
    expect(ok.status).toBe(200);
    expect(ok.body.tags).toEqual(['1']);
  });

  test('the realm follows the mount path of nested routers and a custom tokenPath', async () => {
    const app = express();
    const outer = express.Router();
    const inner = express.Router();
    inner.use(tokens({ tokenPath: '/oauth2/token' }));
    outer.use('/v1', inner);
    app.use('/auth', outer);
    app.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    const res = await request(app).get('/v2/').set('Host', HOST);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="http://${HOST}/auth/v1/oauth2/token",service="${SERVICE}"`);
    const token = await tokenFrom(app, '/auth/v1/oauth2/token', '');
    expect((await request(app).get('/v2/').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });

  test('a route in a sub-app finds the tokenRouter of the app it is mounted in, with the sub-app\'s path', async () => {
    const app = express();
    const registry = express();
    registry.get('/v2/alice/app/tags/list', requireBearer('repository:alice/app:pull'), tags);
    const auth = express.Router();
    auth.use(tokens());
    app.use('/auth', auth);
    app.use('/registry', registry);
    const res = await request(app).get('/registry/v2/alice/app/tags/list').set('Host', HOST);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toContain(`realm="http://${HOST}/auth/token"`);
    const token = await tokenFrom(app, '/auth/token');
    expect((await request(app).get('/registry/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });

  test('tokenRouter\'s realm option is the realm, whatever the Host (a proxy in front)', async () => {
    const app = express();
    app.use(tokens({ realm: 'https://auth.example.com/token' }));
    app.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    const res = await request(app).get('/v2/').set('Host', HOST);
    expect(res.headers['www-authenticate']).toBe(`Bearer realm="https://auth.example.com/token",service="${SERVICE}"`);
  });

  test('X-Forwarded-Proto counts only when the app trusts the proxy', async () => {
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(tokens());
    app.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    const res = await request(app).get('/v2/').set('Host', HOST).set('X-Forwarded-Proto', 'https');
    expect(res.headers['www-authenticate']).toContain(`realm="https://${HOST}/token"`);
  });

  test('two apps in one process each verify with their own tokenRouter: nothing is process-wide', async () => {
    const other = await import('../../lib/keys/index.js').then((k) => k.generateSigningKey({ commonName: 'other' }));
    const appA = express();
    appA.use(tokens());
    appA.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    const appB = express();
    appB.use(tokens({ keys: { privateKey: other.privateKeyPem, certificateChain: other.certificatePem } }));
    appB.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    const fromA = await tokenFrom(appA, '/token', '');
    expect((await request(appA).get('/v2/').set('Authorization', `Bearer ${fromA}`)).status).toBe(200);
    const inB = await request(appB).get('/v2/').set('Authorization', `Bearer ${fromA}`);
    expect(inB.status).toBe(401);
    expect(inB.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  test('a scope outside the grammar throws where the route is declared, not at a request', () => {
    expect(() => requireBearer('repository:alice/app')).toThrow(/type:name:actions/);
    expect(() => requireBearer(42 as unknown as string)).toThrow(/scope must be a string/);
  });
});

describe('requireBearer(scope) with no usable tokenRouter: 500 in the registry shape, the mistake reported once, naming both remedies', () => {
  afterEach(() => { jest.restoreAllMocks(); });

  test('no tokenRouter mounted: the error goes to stderr (no token service to report to)', async () => {
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const app = express();
    app.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    for (let i = 0; i < 2; i += 1) {
      const res = await request(app).get('/v2/');
      expect(res.status).toBe(500);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.body).toEqual({ errors: [{ code: 'UNKNOWN', message: 'bearer authentication is not configured on this server' }] });
    }
    expect(logged).toHaveBeenCalledTimes(1);
    const line = String(logged.mock.calls[0]?.[0]);
    expect(line).toContain('ERR_BEARER_SETUP');
    expect(line).toContain('app.use(tokenRouter(');
    expect(line).toContain('requireBearer(scope, { realm, keys })');
  });

  test('two tokenRouters: the error goes to the token service\'s onError', async () => {
    const errors: unknown[] = [];
    const app = express();
    app.use('/a', tokens({}, errors));
    app.use('/b', tokens({}, errors));
    app.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    expect((await request(app).get('/v2/')).status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(BearerSetupError);
    expect((errors[0] as BearerSetupError).message).toMatch(/found 2 tokenRouters.*bearerGuard\(\{ realm, keys \}\)/);
  });

  test('a tokenRouter mounted at a pattern and without a realm option: the error asks for the realm option', async () => {
    const errors: unknown[] = [];
    const app = express();
    app.use('/:tenant', tokens({}, errors));
    app.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    expect((await request(app).get('/v2/')).status).toBe(500);
    expect((errors[0] as Error).message).toMatch(/"realm" option/);
  });

  test('a tokenRouter for several services: the error asks for the service', async () => {
    const errors: unknown[] = [];
    const app = express();
    app.use(tokens({ service: [SERVICE, 'other.registry'] }, errors));
    app.get('/v2/', requireBearer([]), (_req, res) => { res.json({}); });
    expect((await request(app).get('/v2/')).status).toBe(500);
    expect((errors[0] as Error).message).toMatch(/several services.*service \}/);
  });
});
