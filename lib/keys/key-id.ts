import { createHash, type KeyObject } from 'node:crypto';

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
