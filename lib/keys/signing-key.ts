import { createPrivateKey, createPublicKey, KeyObject, X509Certificate } from 'node:crypto';
import type { JWK } from 'jose';
import { KeyConfigurationError } from './key-error.js';
import { jwkThumbprint, libtrustKeyId } from './key-id.js';

/** Signature algorithms dockgate signs and verifies with: the ones registry 2.8 (libtrust) accepts. */
export type SigningAlgorithm = 'ES256' | 'ES384' | 'ES512' | 'RS256' | 'RS384' | 'RS512';

/** How the `kid` header is computed. */
export type KeyIdFormat = 'libtrust' | 'rfc7638';

/** A signing key as the host configures it. */
export interface SigningKeyInput {
  /** PEM private key (PKCS#8, SEC1 or PKCS#1) or a private KeyObject: EC P-256/384/521 or RSA ≥ 2048 bits. */
  privateKey: string | Buffer | KeyObject;
  /**
   * PEM certificate chain, leaf first, whose leaf holds this key's public half. When given, tokens
   * carry it as `x5c`, which registry 2.8 and 3.x both verify against their `rootcertbundle`.
   */
  certificateChain?: string | Buffer;
  /**
   * The `kid` header: `'libtrust'` (registry 2.8, Harbor, GitLab), `'rfc7638'` (JWK thumbprint,
   * registry 3.x) or a literal id. Defaults to `'libtrust'`.
   */
  keyId?: KeyIdFormat | { literal: string };
  /** RSA only: RS256, RS384 or RS512. EC keys always use the algorithm of their curve. Defaults to RS256. */
  algorithm?: SigningAlgorithm;
}

/** A key imported once at start-up, ready to sign and publish. */
export interface SigningKey {
  readonly alg: SigningAlgorithm;
  readonly kid: string;
  /** Base64 (standard, padded) DER certificates, leaf first, when a chain was configured. */
  readonly x5c?: string[];
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** The public key as a JWK with `kid`, `alg` and `use: "sig"`, for the JWKS. */
  readonly publicJwk: JWK;
}

const CURVE_ALG: Record<string, SigningAlgorithm> = { 'prime256v1': 'ES256', 'secp384r1': 'ES384', 'secp521r1': 'ES512' };

function toPrivateKey(input: SigningKeyInput['privateKey']): KeyObject {
  if (input instanceof KeyObject) {
    if (input.type !== 'private') throw new KeyConfigurationError('signing key must be a private key');
    return input;
  }
  try {
    return createPrivateKey(input);
  } catch (err) {
    // The PEM itself is never part of the message: it is a secret.
    throw new KeyConfigurationError('signing key is not a readable PEM private key', { cause: err });
  }
}

function algorithmOf(key: KeyObject, requested: SigningAlgorithm | undefined): SigningAlgorithm {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === 'ec') {
    const alg = CURVE_ALG[details.namedCurve ?? ''];
    if (!alg) throw new KeyConfigurationError(`EC signing key curve ${details.namedCurve} is not P-256, P-384 or P-521`);
    if (requested && requested !== alg) throw new KeyConfigurationError(`EC key on ${details.namedCurve} signs with ${alg}, not ${requested}`);
    return alg;
  }
  if (key.asymmetricKeyType === 'rsa') {
    if ((details.modulusLength ?? 0) < 2048) throw new KeyConfigurationError('RSA signing key must be at least 2048 bits');
    const alg = requested ?? 'RS256';
    if (!alg.startsWith('RS')) throw new KeyConfigurationError(`RSA key cannot sign with ${alg}`);
    return alg;
  }
  throw new KeyConfigurationError(`signing key type ${key.asymmetricKeyType} is not supported (use EC P-256/384/521 or RSA)`);
}

/** Splits a PEM bundle into its certificates. */
export function splitCertificates(pem: string | Buffer): X509Certificate[] {
  const blocks = pem.toString().match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new KeyConfigurationError('certificate chain holds no PEM certificate');
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new KeyConfigurationError('certificate chain holds an unreadable certificate', { cause: err });
    }
  });
}

function sameKey(a: KeyObject, b: KeyObject): boolean {
  return a.export({ type: 'spki', format: 'der' }).equals(b.export({ type: 'spki', format: 'der' }));
}

/**
 * Imports a signing key once: checks type and size, derives the algorithm and `kid`, checks that
 * the certificate chain's leaf belongs to the key, and prepares the public JWK.
 *
 * @example
 * const key = loadSigningKey({ privateKey: readFileSync('key.pem'), certificateChain: readFileSync('cert.pem') });
 * key.kid // libtrust id, as registry 2.8 wants it
 * @throws {KeyConfigurationError} for an unusable key or a chain that does not match it.
 */
export function loadSigningKey(input: SigningKeyInput): SigningKey {
  const privateKey = toPrivateKey(input.privateKey);
  const alg = algorithmOf(privateKey, input.algorithm);
  const publicKey = createPublicKey(privateKey);
  let x5c: string[] | undefined;
  if (input.certificateChain !== undefined) {
    const chain = splitCertificates(input.certificateChain);
    if (!sameKey(chain[0]!.publicKey, publicKey)) {
      throw new KeyConfigurationError('the first certificate of the chain does not hold the signing key');
    }
    x5c = chain.map((cert) => cert.raw.toString('base64'));
  }
  const jwk = publicKey.export({ format: 'jwk' }) as JWK;
  const format = input.keyId ?? 'libtrust';
  let kid: string;
  if (typeof format === 'object') {
    if (typeof format.literal !== 'string' || format.literal.length === 0) throw new TypeError('"keyId.literal" must be a non-empty string');
    kid = format.literal;
  } else if (format === 'libtrust') {
    kid = libtrustKeyId(publicKey);
  } else if (format === 'rfc7638') {
    kid = jwkThumbprint(jwk);
  } else {
    throw new TypeError('"keyId" must be "libtrust", "rfc7638" or { literal }');
  }
  return { alg, kid, ...(x5c ? { x5c } : {}), privateKey, publicKey, publicJwk: { ...jwk, kid, alg, use: 'sig' } };
}
