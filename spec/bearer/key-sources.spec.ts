import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import request from 'supertest';
import { loadSigningKey, tokenRouter } from '../../lib/index.js';
import { startJwksServer, type JwksServer } from './jwks-server.js';
import { attackerCertificate, generated, ISSUER, protectedApp, SERVICE, sign, signer, tokens } from './support.js';

const get = async (app: ReturnType<typeof protectedApp>, token: string) =>
  (await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`)).status;

describe('the same process\'s tokenRouter or its tokenService: no configuration repeated', () => {
  test('issuer, service and keys come from the router', async () => {
    expect(await get(protectedApp({ keys: tokens }), await sign())).toBe(200);
  });
  test('or from router.tokenService', async () => {
    expect(await get(protectedApp({ keys: tokens.tokenService }), await sign())).toBe(200);
  });
  test('every key of the ring verifies (tokens signed before a rotation stay valid)', async () => {
    const old = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
    const rotated = tokenRouter({ issuer: ISSUER, service: SERVICE, keys: [{ privateKey: generated.privateKeyPem }, { privateKey: old }], allowAnonymous: true });
    const oldKey = loadSigningKey({ privateKey: old });
    const app = protectedApp({ keys: rotated });
    expect(await get(app, await sign({ key: oldKey.privateKey, header: { alg: 'ES384', kid: oldKey.kid } }))).toBe(200);
  });
});

describe('a PEM bundle: certificates or public keys, as a registry rootcertbundle', () => {
  const otherCert = attackerCertificate;
  test('the signing certificate in a bundle with another: the libtrust kid selects it', async () => {
    expect(await get(protectedApp({ keys: { pem: otherCert + generated.certificatePem }, issuer: ISSUER, service: SERVICE }), await sign())).toBe(200);
  });
  test('an SPKI public key; an RFC 7638 kid and no kid also match', async () => {
    const pem = signer.publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const app = protectedApp({ keys: { pem }, issuer: ISSUER, service: SERVICE });
    const rfc = loadSigningKey({ privateKey: generated.privateKeyPem, keyId: 'rfc7638' });
    expect(await get(app, await sign({ header: { kid: rfc.kid } }))).toBe(200);
    expect(await get(app, await sign({ header: { kid: undefined } }))).toBe(200);
  });
  test('no kid with several keys of the same curve: each is tried, the right one verifies', async () => {
    const app = protectedApp({ keys: { pem: otherCert + generated.certificatePem }, issuer: ISSUER, service: SERVICE, cache: false });
    expect(await get(app, await sign({ header: { kid: undefined } }))).toBe(200);
    const stranger = createPrivateKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(await get(app, await sign({ key: stranger, header: { kid: undefined } }))).toBe(401);
  });
  test('a kid the bundle does not know is rejected', async () => {
    expect(await get(protectedApp({ keys: { pem: generated.certificatePem }, issuer: ISSUER, service: SERVICE }), await sign({ header: { kid: 'literal-id' } }))).toBe(401);
  });
  test('private keys and junk are refused at construction', () => {
    expect(() => protectedApp({ keys: { pem: generated.privateKeyPem }, issuer: ISSUER, service: SERVICE })).toThrow('"keys.pem" must hold only public keys');
    expect(() => protectedApp({ keys: { pem: 'nothing' }, issuer: ISSUER, service: SERVICE })).toThrow('"keys.pem"');
  });
});

describe('a local JWKS', () => {
  test('matched by kid', async () => {
    expect(await get(protectedApp({ keys: { jwks: tokens.tokenService.keyRing.jwks }, issuer: ISSUER, service: SERVICE }), await sign())).toBe(200);
  });
  test('private or symmetric members are refused at construction', () => {
    const priv = createPrivateKey(generated.privateKeyPem).export({ format: 'jwk' });
    expect(() => protectedApp({ keys: { jwks: { keys: [priv] } }, issuer: ISSUER, service: SERVICE })).toThrow('"keys.jwks"');
    expect(() => protectedApp({ keys: { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }, issuer: ISSUER, service: SERVICE })).toThrow('"keys.jwks"');
  });
});

describe('a remote JWKS URL (another dockgate): rotation is picked up without restart, outages are 503', () => {
  let server: JwksServer;
  beforeAll(async () => {
    server = await startJwksServer(tokens.tokenService.keyRing.jwks);
  });
  afterAll(() => server.close());

  test('verifies against the fetched keys', async () => {
    expect(await get(protectedApp({ keys: { jwksUrl: server.url }, issuer: ISSUER, service: SERVICE }), await sign())).toBe(200);
  });
  test('a token with a new kid makes it refetch the JWKS (cooldown elapsed)', async () => {
    const app = protectedApp({ keys: { jwksUrl: server.url, cooldownDuration: 0 }, issuer: ISSUER, service: SERVICE });
    expect(await get(app, await sign())).toBe(200);
    const next = loadSigningKey({ privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey });
    const token = await sign({ key: next.privateKey, header: { kid: next.kid } });
    expect(await get(app, token)).toBe(401);
    server.jwks = { keys: [...tokens.tokenService.keyRing.jwks.keys, next.publicJwk] };
    expect(await get(app, token)).toBe(200);
    server.jwks = tokens.tokenService.keyRing.jwks;
  });
  test('an unreachable or failing JWKS answers 503 UNAVAILABLE with Retry-After, not 401', async () => {
    const fresh = await startJwksServer(tokens.tokenService.keyRing.jwks);
    fresh.failWith = 500;
    const app = protectedApp({ keys: { jwksUrl: fresh.url }, issuer: ISSUER, service: SERVICE });
    const res = await request(app).get('/v2/').set('Authorization', `Bearer ${await sign()}`);
    await fresh.close();
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.errors[0].code).toBe('UNAVAILABLE');
    const closed = await request(app).get('/v2/').set('Authorization', `Bearer ${await sign()}`);
    expect(closed.status).toBe(503);
  });
  test('the URL must be http(s)', () => {
    expect(() => protectedApp({ keys: { jwksUrl: 'file:///etc/jwks' }, issuer: ISSUER, service: SERVICE })).toThrow('"keys.jwksUrl"');
  });
});
