import { generateKeyPairSync } from 'node:crypto';
import { createSelfSignedCertificate } from './self-signed-certificate.js';
import { integerOption } from '../options/option-checks.js';

/** Options of {@link generateSigningKey}. */
export interface GenerateSigningKeyOptions {
  /** `ec` (P-256, ES256) or `rsa` (RS256). Defaults to `ec`. */
  type?: 'ec' | 'rsa';
  /** EC curve. Defaults to `P-256`. */
  curve?: 'P-256' | 'P-384' | 'P-521';
  /** RSA modulus length, at least 2048. Defaults to 3072. */
  modulusLength?: number;
  /** Certificate common name. Defaults to `dockgate token signer`. */
  commonName?: string;
  /** Certificate validity in days. Defaults to 3650. */
  days?: number;
}

/** A new signing key and its self-signed certificate, both PEM. */
export interface GeneratedSigningKey {
  /** PKCS#8 PEM private key. Keep it secret. */
  privateKeyPem: string;
  /** Self-signed certificate PEM, for the registry's `rootcertbundle`. */
  certificatePem: string;
}

/**
 * Generates a token-signing key and a self-signed certificate for it.
 *
 * @example
 * const { privateKeyPem, certificatePem } = generateSigningKey();
 * tokenRouter({ ..., keys: { privateKey: privateKeyPem, certificateChain: certificatePem } });
 */
export function generateSigningKey(options: GenerateSigningKeyOptions = {}): GeneratedSigningKey {
  const type = options.type ?? 'ec';
  let privateKey;
  if (type === 'ec') {
    const curve = options.curve ?? 'P-256';
    if (!['P-256', 'P-384', 'P-521'].includes(curve)) throw new TypeError('"curve" must be P-256, P-384 or P-521');
    ({ privateKey } = generateKeyPairSync('ec', { namedCurve: curve }));
  } else if (type === 'rsa') {
    const modulusLength = integerOption(options.modulusLength ?? 3072, 'modulusLength', 2048);
    ({ privateKey } = generateKeyPairSync('rsa', { modulusLength }));
  } else {
    throw new TypeError('"type" must be "ec" or "rsa"');
  }
  const certificatePem = createSelfSignedCertificate(privateKey, {
    ...(options.commonName ? { commonName: options.commonName } : {}),
    ...(options.days ? { days: options.days } : {}),
  });
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), certificatePem };
}
