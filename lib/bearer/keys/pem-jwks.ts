import { createPublicKey, type KeyObject, X509Certificate } from 'node:crypto';
import type { JSONWebKeySet, JWK } from 'jose';
import { jwkThumbprint, libtrustKeyId } from '../../keys/index.js';

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g;
const CURVE_ALG: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };

function publicKeyOf(label: string, block: string): KeyObject {
  if (label === 'CERTIFICATE') return new X509Certificate(block).publicKey;
  if (label === 'PUBLIC KEY' || label === 'RSA PUBLIC KEY') return createPublicKey(block);
  throw new TypeError(`"keys.pem" must hold only public keys and certificates, not a ${label} block`);
}

/**
 * Turns a PEM bundle (public keys and/or certificates, e.g. a registry `rootcertbundle`) into a
 * JWKS. Each key appears under its libtrust id (registry 2.8, Harbor, GitLab), its RFC 7638
 * thumbprint (registry 3.x) and without `kid`, so tokens from any of those issuers match it and
 * only it. The certificates themselves are not checked (validity, usage), as registries do not.
 *
 * @throws {TypeError} naming `keys.pem` when the bundle holds no usable key.
 */
export function pemToJwks(pem: string | Buffer): JSONWebKeySet {
  const blocks = [...pem.toString().matchAll(BLOCK)];
  if (blocks.length === 0) throw new TypeError('"keys.pem" holds no PEM public key or certificate');
  const keys: JWK[] = [];
  for (const [block, label] of blocks) {
    let key: KeyObject;
    try {
      key = publicKeyOf(label as string, block);
    } catch (err) {
      if (err instanceof TypeError && err.message.startsWith('"keys.pem"')) throw err;
      throw new TypeError('"keys.pem" holds an unreadable PEM block', { cause: err });
    }
    if (key.asymmetricKeyType !== 'ec' && key.asymmetricKeyType !== 'rsa') {
      throw new TypeError(`"keys.pem" holds a ${key.asymmetricKeyType} key; only EC and RSA keys are supported`);
    }
    const jwk = key.export({ format: 'jwk' }) as JWK;
    const alg = jwk.kty === 'EC' ? CURVE_ALG[jwk.crv ?? ''] : undefined;
    const base: JWK = { ...jwk, use: 'sig', ...(alg ? { alg } : {}) };
    keys.push({ ...base, kid: libtrustKeyId(key) }, { ...base, kid: jwkThumbprint(jwk) }, base);
  }
  return { keys };
}
