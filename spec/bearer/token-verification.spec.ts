import { describe, expect, test } from '@jest/globals';
import { SignJWT } from 'jose';
import request from 'supertest';
import { parseChallenge } from '../../lib/client/registry/index.js';
import {
  attacker, attackerCertificate, attackerKid, attackerPrivate, generated, hs256WithPublicKey, ISSUER, protectedApp, SERVICE, sign, signer, unsecuredToken,
} from './support.js';

const app = protectedApp({ cache: false });

async function statusOf(token: string): Promise<{ status: number; error: string | undefined }> {
  const res = await request(app).get('/v2/alice/app/tags/list').set('Authorization', `Bearer ${token}`);
  return { status: res.status, error: parseChallenge(res.headers['www-authenticate'])?.error };
}
const rejected = { status: 401, error: 'invalid_token' };
const now = () => Math.floor(Date.now() / 1000);

describe('a well-formed token from the configured key is accepted', () => {
  test('baseline', async () => {
    expect((await statusOf(await sign())).status).toBe(200);
  });
  test('aud may be an array holding the service', async () => {
    expect((await statusOf(await sign({ claims: { aud: ['other', SERVICE] } }))).status).toBe(200);
  });
  test('without kid, the only configured key is used', async () => {
    expect((await statusOf(await sign({ header: { kid: undefined } }))).status).toBe(200);
  });
});

describe('signature: a tampered token is rejected', () => {
  test('payload changed after signing', async () => {
    const [h, , s] = (await sign()).split('.');
    const forged = Buffer.from(JSON.stringify({ iss: ISSUER, sub: 'alice', aud: SERVICE, exp: now() + 300, access: [{ type: 'repository', name: 'alice/app', actions: ['*'] }] })).toString('base64url');
    expect(await statusOf(`${h}.${forged}.${s}`)).toEqual(rejected);
  });
  test('signature bytes flipped', async () => {
    const token = await sign();
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    expect(await statusOf(`${token.slice(0, -2)}${last}${token.at(-1)}`)).toEqual(rejected);
  });
  test('signature removed', async () => {
    const [h, p] = (await sign()).split('.');
    expect(await statusOf(`${h}.${p}.`)).toEqual(rejected);
  });
});

describe('algorithms: only the allow-list, never none, never HMAC', () => {
  test('alg: none', async () => {
    expect(await statusOf(unsecuredToken())).toEqual(rejected);
  });
  test('HS256 keyed with the public key (PEM certificate, SPKI PEM, JWK JSON): algorithm confusion', async () => {
    const spki = signer.publicKey.export({ type: 'spki', format: 'pem' });
    for (const secret of [generated.certificatePem, spki, JSON.stringify(signer.publicJwk)]) {
      expect(await statusOf(hs256WithPublicKey(secret))).toEqual(rejected);
    }
  });
  test('an algorithm outside a narrowed allow-list is refused even with the right key', async () => {
    const rsOnly = protectedApp({ algorithms: ['RS256'] });
    const res = await request(rsOnly).get('/v2/').set('Authorization', `Bearer ${await sign()}`);
    expect(res.status).toBe(401);
  });
});

describe('keys carried in the token are never trust anchors', () => {
  test('a jwk header with the attacker key (and the trusted kid), signed by the attacker', async () => {
    const jwk = attacker.publicKey.export({ format: 'jwk' });
    expect(await statusOf(await sign({ key: attackerPrivate, header: { jwk } }))).toEqual(rejected);
    expect(await statusOf(await sign({ key: attackerPrivate, header: { jwk, kid: attackerKid } }))).toEqual(rejected);
  });
  test('an x5c header with the attacker certificate, signed by the attacker', async () => {
    const der = attackerCertificate.replace(/-----[^-]+-----|\s/g, '');
    expect(await statusOf(await sign({ key: attackerPrivate, header: { x5c: [der] } }))).toEqual(rejected);
    expect(await statusOf(await sign({ key: attackerPrivate, header: { x5c: [der], kid: attackerKid } }))).toEqual(rejected);
  });
  test('an unknown kid', async () => {
    expect(await statusOf(await sign({ header: { kid: 'AAAA:BBBB' } }))).toEqual(rejected);
  });
});

describe('claims: iss, aud, exp and nbf (60 s leeway), access shape', () => {
  test('wrong issuer, missing issuer', async () => {
    expect(await statusOf(await sign({ claims: { iss: 'someone-else' } }))).toEqual(rejected);
    expect(await statusOf(await sign({ claims: { iss: undefined } }))).toEqual(rejected);
  });
  test('wrong audience, an array without the service, missing audience', async () => {
    expect(await statusOf(await sign({ claims: { aud: 'other-registry' } }))).toEqual(rejected);
    expect(await statusOf(await sign({ claims: { aud: ['a', 'b'] } }))).toEqual(rejected);
    expect(await statusOf(await sign({ claims: { aud: undefined } }))).toEqual(rejected);
  });
  test('expired beyond the leeway is rejected; expired within it is accepted', async () => {
    expect(await statusOf(await sign({ claims: { iat: now() - 600, nbf: now() - 600, exp: now() - 61 } }))).toEqual(rejected);
    expect((await statusOf(await sign({ claims: { iat: now() - 600, nbf: now() - 600, exp: now() - 50 } }))).status).toBe(200);
  });
  test('not yet valid beyond the leeway is rejected; within it accepted', async () => {
    expect(await statusOf(await sign({ claims: { nbf: now() + 120 } }))).toEqual(rejected);
    expect((await statusOf(await sign({ claims: { nbf: now() + 30 } }))).status).toBe(200);
  });
  test('a token without exp is rejected', async () => {
    expect(await statusOf(await sign({ claims: { exp: undefined } }))).toEqual(rejected);
  });
  test('a malformed access claim or sub is rejected, not a 500', async () => {
    for (const access of ['repository:alice/app:pull', [{ type: 'repository', name: 'alice/app', actions: 'pull' }], [null]]) {
      expect(await statusOf(await sign({ claims: { access } }))).toEqual(rejected);
    }
    expect(await statusOf(await sign({ claims: { sub: 42 as unknown as string } }))).toEqual(rejected);
  });
  test('the leeway is configurable', async () => {
    const strict = protectedApp({ clockTolerance: 0, cache: false });
    const token = await new SignJWT({ access: [] }).setProtectedHeader({ alg: signer.alg, kid: signer.kid })
      .setIssuer(ISSUER).setAudience(SERVICE).setExpirationTime(now() - 5).sign(signer.privateKey);
    expect((await request(strict).get('/v2/').set('Authorization', `Bearer ${token}`)).status).toBe(401);
    expect((await request(app).get('/v2/').set('Authorization', `Bearer ${token}`)).status).toBe(200);
  });
});
