import { describe, expect, test } from '@jest/globals';
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { base64url, calculateJwkThumbprint, importX509, jwtVerify } from 'jose';
import request from 'supertest';
import { generateSigningKey, libtrustKeyId, loadSigningKey, signAccessToken } from '../../lib/index.js';
import { ecKey, headerOf, ISSUER, passwordGrant, SERVICE, tokenApp } from '../support/token-fixture.js';

const issue = async (app: Parameters<typeof request>[0]) =>
  (await request(app).post('/token').type('form').send(passwordGrant({ scope: 'repository:alice/app:pull' }))).body.access_token as string;

describe('access tokens follow the distribution JWT spec', () => {
  test('header: alg, typ JWT, kid (libtrust by default) and x5c from the configured certificate', async () => {
    const { app } = tokenApp();
    const header = headerOf(await issue(app));
    expect(header.alg).toBe('ES256');
    expect(header.typ).toBe('JWT');
    expect(header.kid).toBe(libtrustKeyId(createPublicKey(ecKey.privateKeyPem)));
    expect(header.x5c).toEqual([new X509Certificate(ecKey.certificatePem).raw.toString('base64')]);
  });
  test('claims: iss, sub, aud as a string, exp, nbf, iat, unique jti, access', async () => {
    const { app } = tokenApp();
    const token = await issue(app);
    const { payload } = await jwtVerify(token, await importX509(ecKey.certificatePem, 'ES256'), { issuer: ISSUER, audience: SERVICE });
    expect(payload.sub).toBe('alice');
    expect(typeof payload.aud).toBe('string');
    expect(payload.nbf).toBeLessThanOrEqual(payload.iat as number);
    expect(typeof payload.jti).toBe('string');
    expect(payload.access).toEqual([{ type: 'repository', name: 'alice/app', actions: ['pull'] }]);
    expect(headerOf(await issue(app)).kid).toBe(headerOf(token).kid);
    const other = await issue(app);
    expect((await jwtVerify(other, await importX509(ecKey.certificatePem, 'ES256'))).payload.jti).not.toBe(payload.jti);
  });
  test('ECDSA signatures are raw R||S (64 bytes for ES256), as libtrust requires', async () => {
    const { app } = tokenApp();
    const signature = (await issue(app)).split('.')[2] as string;
    expect(base64url.decode(signature)).toHaveLength(64);
  });
});

describe('keys: EC P-256/384/521 and RSA ≥ 2048, from PEM or KeyObject', () => {
  test.each([['P-384', 'ES384', 96], ['P-521', 'ES512', 132]] as const)('%s signs %s with a %d-byte signature', async (curve, alg, length) => {
    const key = loadSigningKey({ privateKey: generateSigningKey({ curve }).privateKeyPem });
    expect(key.alg).toBe(alg);
    const { token } = await signAccessToken(key, { issuer: 'i', subject: 's', audience: 'a', access: [], ttl: 60 });
    expect(base64url.decode(token.split('.')[2] as string)).toHaveLength(length);
  });
  test('RSA signs RS256 and verifies with its certificate', async () => {
    const rsa = generateSigningKey({ type: 'rsa', modulusLength: 2048 });
    const { app } = tokenApp({ keys: { privateKey: rsa.privateKeyPem, certificateChain: rsa.certificatePem } });
    const token = await issue(app);
    expect(headerOf(token).alg).toBe('RS256');
    await expect(jwtVerify(token, await importX509(rsa.certificatePem, 'RS256'))).resolves.toBeDefined();
  });
  test.each([['P-256', 'ES256'], ['P-384', 'ES384'], ['P-521', 'ES512']] as const)('a %s key\'s token verifies with jose as %s under its certificate', async (curve, alg) => {
    const generated = generateSigningKey({ curve });
    const key = loadSigningKey({ privateKey: generated.privateKeyPem, certificateChain: generated.certificatePem });
    const { token } = await signAccessToken(key, { issuer: 'i', subject: 's', audience: 'a', access: [], ttl: 60 });
    const { payload, protectedHeader } = await jwtVerify(token, await importX509(generated.certificatePem, alg), { issuer: 'i', audience: 'a' });
    expect(protectedHeader).toEqual({ alg, typ: 'JWT', kid: key.kid, x5c: key.x5c });
    expect(payload.sub).toBe('s');
  });
  test.each(['RS256', 'RS384', 'RS512'] as const)('an RSA key configured for %s signs and verifies with it', async (alg) => {
    const rsa = generateSigningKey({ type: 'rsa', modulusLength: 2048 });
    const key = loadSigningKey({ privateKey: rsa.privateKeyPem, algorithm: alg });
    const { token } = await signAccessToken(key, { issuer: 'i', subject: 's', audience: 'a', access: [{ type: 'repository', name: 'a/b', actions: ['pull'] }], ttl: 60 });
    expect(headerOf(token)).toEqual({ alg, typ: 'JWT', kid: key.kid });
    const { payload } = await jwtVerify(token, key.publicKey, { algorithms: [alg] });
    expect(payload.access).toEqual([{ type: 'repository', name: 'a/b', actions: ['pull'] }]);
  });
  test('claims carrying any Unicode survive signing: the payload is UTF-8 JSON', async () => {
    const key = loadSigningKey({ privateKey: ecKey.privateKeyPem });
    const subject = 'ünï\u2028cödé "quoted" \\ 🐳';
    const { token } = await signAccessToken(key, { issuer: 'i', subject, audience: 'a', access: [], ttl: 60 });
    expect((await jwtVerify(token, key.publicKey)).payload.sub).toBe(subject);
  });
  test('a KeyObject works as well as a PEM', () => {
    const key = loadSigningKey({ privateKey: createPrivateKey(ecKey.privateKeyPem) });
    expect(key.kid).toBe(libtrustKeyId(createPublicKey(ecKey.privateKeyPem)));
  });
  test('kid in RFC 7638 form (registry 3.x) is the JWK thumbprint', async () => {
    const key = loadSigningKey({ privateKey: ecKey.privateKeyPem, keyId: 'rfc7638' });
    expect(key.kid).toBe(await calculateJwkThumbprint(key.publicJwk, 'sha256'));
  });
  test('the libtrust kid is 12 groups of 4 base32 characters, stable per key', () => {
    const id = libtrustKeyId(createPublicKey(ecKey.privateKeyPem));
    expect(id).toMatch(/^([A-Z2-7]{4}:){11}[A-Z2-7]{4}$/);
    expect(libtrustKeyId(createPublicKey(generateSigningKey().privateKeyPem))).not.toBe(id);
  });
  test.each([
    ['a 1024-bit RSA key', () => ({ privateKey: (generateRsa1024()) })],
    ['garbage', () => ({ privateKey: 'not a pem' })],
    ['a certificate for another key', () => ({ privateKey: ecKey.privateKeyPem, certificateChain: generateSigningKey().certificatePem })],
    ['an EC key asked to sign RS256', () => ({ privateKey: ecKey.privateKeyPem, algorithm: 'RS256' as const })],
  ])('%s is refused at construction, without the key in the message', (_name, input) => {
    let message = '';
    try {
      loadSigningKey(input());
    } catch (err) {
      message = (err as Error).message;
      expect((err as { code?: string }).code).toBe('ERR_KEY_CONFIGURATION');
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('PRIVATE KEY');
  });
});

function generateRsa1024(): string {
  return generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

describe('the JWKS endpoint publishes the public keys, never private parts', () => {
  test('GET /jwks', async () => {
    const old = generateSigningKey();
    const { app } = tokenApp({ keys: [{ privateKey: ecKey.privateKeyPem }, { privateKey: old.privateKeyPem }] });
    const res = await request(app).get('/jwks');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    expect(res.body.keys).toHaveLength(2);
    for (const jwk of res.body.keys) {
      expect(jwk).toMatchObject({ kty: 'EC', crv: 'P-256', use: 'sig', alg: 'ES256' });
      expect(jwk).not.toHaveProperty('d');
    }
    expect(res.body.keys[0].kid).toBe(headerOf(await issue(app)).kid);
  });
});
