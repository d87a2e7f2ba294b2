/**
 * Key rotation: `keys: [new, old]` — the first key signs, every key verifies and is published in
 * the JWKS — so tokens signed before a rotation stay valid until they expire.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import express, { type Express, type RequestHandler } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import request from 'supertest';
import { generateSigningKey, loadSigningKey, requireBearer, tokenRouter, type SigningKeyInput, type TokenRouter } from '../../lib/index.js';
import { authenticate, authorize, ISSUER, passwordGrant, SERVICE } from '../support/token-fixture.js';

const oldKey: SigningKeyInput = (() => {
  const k = generateSigningKey({ commonName: 'old signer' });
  return { privateKey: k.privateKeyPem, certificateChain: k.certificatePem };
})();
const newKey: SigningKeyInput = (() => {
  const k = generateSigningKey({ type: 'rsa', commonName: 'new signer' });
  return { privateKey: k.privateKeyPem, certificateChain: k.certificatePem };
})();
const oldKid = loadSigningKey(oldKey).kid;
const newKid = loadSigningKey(newKey).kid;

const ring = (keys: SigningKeyInput[]): TokenRouter =>
  tokenRouter({ issuer: ISSUER, service: SERVICE, keys, authenticate, authorize, throttle: false });

async function issue(router: TokenRouter): Promise<string> {
  const app = express().use(router);
  const res = await request(app).post('/token').type('form').send(passwordGrant({ scope: 'repository:alice/app:pull' }));
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

/**
 * One token server at a fixed URL whose key ring can be replaced, as a rolling restart with a
 * new configuration would: clients and resource servers keep the same realm and JWKS URL.
 */
function swappableTokenServer(initial: TokenRouter): { app: Express; use(router: TokenRouter): void } {
  let current: RequestHandler = initial;
  const app = express();
  app.use((req, res, next) => current(req, res, next));
  return { app, use: (router) => { current = router; } };
}

describe('key rotation: the first key of the ring signs, every key verifies', () => {
  let before: TokenRouter;
  let after: TokenRouter;
  let retired: TokenRouter;
  let tokenBefore: string;
  let tokenAfter: string;

  beforeAll(async () => {
    before = ring([oldKey]);
    after = ring([newKey, oldKey]);
    retired = ring([newKey]);
    tokenBefore = await issue(before);
    tokenAfter = await issue(after);
  });

  test('a token issued after the rotation is signed with the new key (its kid and alg)', () => {
    expect(decodeProtectedHeader(tokenBefore)).toMatchObject({ kid: oldKid, alg: 'ES256' });
    expect(decodeProtectedHeader(tokenAfter)).toMatchObject({ kid: newKid, alg: 'RS256' });
  });

  test('the JWKS publishes both keys, the signing key first', async () => {
    const res = await request(express().use(after)).get('/jwks');
    expect(res.status).toBe(200);
    expect(res.body.keys.map((k: { kid: string }) => k.kid)).toEqual([newKid, oldKid]);
  });

  test('a token signed with the old key verifies against the rotated JWKS; the new one too', async () => {
    const jwks = createLocalJWKSet(after.tokenService.keyRing.jwks);
    for (const token of [tokenBefore, tokenAfter]) {
      const { payload } = await jwtVerify(token, jwks, { issuer: ISSUER, audience: SERVICE });
      expect(payload.sub).toBe('alice');
    }
  });

  test('once the old key leaves the ring, its tokens no longer verify', async () => {
    expect(retired.tokenService.keyRing.jwks.keys.map((k) => k.kid)).toEqual([newKid]);
    await expect(jwtVerify(tokenBefore, createLocalJWKSet(retired.tokenService.keyRing.jwks))).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
  });

  test('requireBearer on the rotated token service in-process accepts both tokens', async () => {
    const app = express().get('/v2/alice/app/tags/list', requireBearer('repository:alice/app:pull', { realm: 'http://127.0.0.1/token', keys: after }), (_req, res) => {
      res.json({ ok: true });
    });
    for (const token of [tokenBefore, tokenAfter]) {
      const res = await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(200);
    }
  });
});

describe('a remote-JWKS requireBearer picks up a new key without a restart', () => {
  let server: Server;
  let tokenUrl: string;
  let tokens: ReturnType<typeof swappableTokenServer>;
  let registry: Express;

  beforeAll(async () => {
    tokens = swappableTokenServer(ring([oldKey]));
    server = await new Promise<Server>((resolve) => {
      const s = tokens.app.listen(0, '127.0.0.1', () => resolve(s));
    });
    tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    registry = express().get(
      '/v2/alice/app/tags/list',
      requireBearer('repository:alice/app:pull', {
        realm: `${tokenUrl}/token`,
        // No cooldown: a kid not yet seen is looked up at once (the default waits 30 s between fetches).
        keys: { jwksUrl: `${tokenUrl}/jwks`, cooldownDuration: 0 },
        service: SERVICE,
        issuer: ISSUER,
        cache: false,
      }),
      (_req, res) => {
        res.json({ ok: true });
      },
    );
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const pull = (token: string) => request(registry).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`);

  test('old-key token accepted before the rotation, both accepted after it, the old one refused once retired', async () => {
    const tokenBefore = await issue(ring([oldKey]));
    expect((await pull(tokenBefore)).status).toBe(200);

    tokens.use(ring([newKey, oldKey]));
    const tokenAfter = await issue(ring([newKey, oldKey]));
    expect(decodeProtectedHeader(tokenAfter).kid).toBe(newKid);
    expect((await pull(tokenAfter)).status).toBe(200);
    expect((await pull(tokenBefore)).status).toBe(200);

    // Retiring the old key: a resource server that fetches the JWKS afresh refuses its tokens.
    tokens.use(ring([newKey]));
    const fresh = express().get('/v2/', requireBearer([], { realm: `${tokenUrl}/token`, keys: { jwksUrl: `${tokenUrl}/jwks` }, service: SERVICE, issuer: ISSUER }), (_req, res) => {
      res.json({});
    });
    const refused = await request(fresh).get('/v2/').set('Authorization', `Bearer ${tokenBefore}`);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('error="invalid_token"');
    expect((await request(fresh).get('/v2/').set('Authorization', `Bearer ${tokenAfter}`)).status).toBe(200);
  });
});
