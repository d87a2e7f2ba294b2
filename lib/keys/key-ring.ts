import type { JSONWebKeySet } from 'jose';
import { loadSigningKey, type SigningKey, type SigningKeyInput } from './signing-key.js';

/**
 * The keys of one token service: the first signs new tokens, every key (the signer included)
 * verifies and is published in the JWKS, so tokens signed before a rotation stay valid until
 * they expire.
 */
export interface KeyRing {
  readonly signer: SigningKey;
  readonly keys: readonly SigningKey[];
  /** The public JWKS document (`{"keys":[…]}`), built once. */
  readonly jwks: JSONWebKeySet;
}

/**
 * Imports a list of signing keys once and builds the JWKS.
 *
 * @example
 * const ring = loadKeyRing([{ privateKey: newPem }, { privateKey: oldPem }]);
 * ring.signer.kid; ring.jwks.keys.length // 2
 */
export function loadKeyRing(inputs: readonly SigningKeyInput[]): KeyRing {
  if (inputs.length === 0) throw new TypeError('"keys" must hold at least one signing key');
  const keys = inputs.map((input) => loadSigningKey(input));
  const kids = new Set<string>();
  for (const key of keys) {
    if (kids.has(key.kid)) throw new TypeError(`"keys" holds two keys with kid ${key.kid}`);
    kids.add(key.kid);
  }
  return { signer: keys[0]!, keys, jwks: { keys: keys.map((k) => k.publicJwk) } };
}
