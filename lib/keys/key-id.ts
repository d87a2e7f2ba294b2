import { createHash, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * The key id registry 2.8 (and Harbor, GitLab, docker_auth) expects in a token's `kid`: libtrust's
 * fingerprint — SHA-256 of the DER SubjectPublicKeyInfo, first 240 bits, base32 without padding,
 * grouped by four with `:` (12 groups).
 *
 * @example
 * libtrustKeyId(createPublicKey(pem)) // 'PYYO:TEWU:V7JH:26JV:AQTZ:LJC3:SXVJ:XGHA:34F2:2LAQ:ZRMK:Z7Q6'
 */
export function libtrustKeyId(publicKey: KeyObject): string {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const digest = createHash('sha256').update(der).digest().subarray(0, 30);
  return base32(digest).match(/.{4}/g)!.join(':');
}

/**
 * The RFC 7638 JWK thumbprint (SHA-256, base64url) registry 3.x expects in `kid`: the hash of
 * the key's required members in lexicographic order.
 *
 * @example
 * jwkThumbprint(publicKey.export({ format: 'jwk' })) // 'NLgcSE9Rc9SzQ6m-jZQjMwd2bk-eB88l3p3yphIhqZE'
 */
export function jwkThumbprint(jwk: JWK): string {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}
