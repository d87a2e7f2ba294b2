import { createPublicKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import { bitString, boolean, explicit, nullValue, octetString, oid, sequence, set, time, tlv, unsignedInteger, utf8 } from './der.js';
import { KeyConfigurationError } from './key-error.js';

/** Options of {@link createSelfSignedCertificate}. */
export interface SelfSignedCertificateOptions {
  /** Subject and issuer common name. Defaults to `dockgate token signer`. */
  commonName?: string;
  /** Days of validity from now. Defaults to 3650. */
  days?: number;
}

const SIGNATURE: Record<string, { oid: string; hash: string; params: boolean }> = {
  'ec:prime256v1': { oid: '1.2.840.10045.4.3.2', hash: 'sha256', params: false },
  'ec:secp384r1': { oid: '1.2.840.10045.4.3.3', hash: 'sha384', params: false },
  'ec:secp521r1': { oid: '1.2.840.10045.4.3.4', hash: 'sha512', params: false },
  rsa: { oid: '1.2.840.113549.1.1.11', hash: 'sha256', params: true },
};

/**
 * Creates a self-signed X.509 v3 certificate (PEM) for a signing key, fit for a registry's
 * `auth.token.rootcertbundle` and for the tokens' `x5c` header: CA basic constraints and the
 * digitalSignature and keyCertSign key usages, so Go's x509 verifier accepts it both as the root
 * and as the one-certificate chain of a token.
 *
 * @example
 * const pem = createSelfSignedCertificate(createPrivateKey(keyPem), { commonName: 'my token server' });
 */
export function createSelfSignedCertificate(privateKey: KeyObject, options: SelfSignedCertificateOptions = {}): string {
  const commonName = options.commonName ?? 'dockgate token signer';
  const days = options.days ?? 3650;
  if (!Number.isInteger(days) || days < 1) throw new TypeError('"days" must be a positive integer');
  const kind = privateKey.asymmetricKeyType === 'ec' ? `ec:${privateKey.asymmetricKeyDetails?.namedCurve}` : privateKey.asymmetricKeyType ?? '';
  const algorithm = SIGNATURE[kind];
  if (!algorithm || privateKey.type !== 'private') throw new KeyConfigurationError('certificate key must be a private EC P-256/384/521 or RSA key');
  const algorithmId = algorithm.params ? sequence(oid(algorithm.oid), nullValue()) : sequence(oid(algorithm.oid));
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8(commonName))));
  const serial = randomBytes(16);
  serial[0] = (serial[0] as number) & 0x7f;
  const now = new Date();
  const notBefore = new Date(now.getTime() - 5 * 60_000); // tolerate small clock skew on the verifier
  const notAfter = new Date(now.getTime() + days * 86_400_000);
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const extensions = explicit(3, sequence(
    sequence(oid('2.5.29.19'), boolean(true), octetString(sequence(boolean(true)))), // basicConstraints: CA
    sequence(oid('2.5.29.15'), boolean(true), octetString(tlv(0x03, Buffer.from([0x02, 0x84])))), // keyUsage: digitalSignature, keyCertSign
  ));
  const tbs = sequence(
    explicit(0, unsignedInteger(Buffer.from([2]))),
    unsignedInteger(serial),
    algorithmId,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    spki,
    extensions,
  );
  const signature = sign(algorithm.hash, tbs, privateKey); // DER-encoded ECDSA, as X.509 wants
  const der = sequence(tbs, algorithmId, bitString(signature));
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}
