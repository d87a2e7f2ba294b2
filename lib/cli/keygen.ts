import { createPublicKey } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateSigningKey, libtrustKeyId, loadSigningKey } from '../keys/index.js';
import { UsageError, type CliIo } from './io.js';

export const keygenHelp = `Usage: dockgate keygen [--out DIR] [--type ec|rsa] [--curve P-256|P-384|P-521] [--bits N] [--cn NAME] [--days N] [--force]

Creates a token-signing key (DIR/key.pem, mode 0600) and a self-signed certificate
(DIR/cert.pem) to use as a registry's auth.token.rootcertbundle. DIR defaults to ".".
`;

/** `dockgate keygen`: writes key.pem and cert.pem and prints their key ids. */
export async function keygen(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string', default: '.' },
      type: { type: 'string', default: 'ec' },
      curve: { type: 'string', default: 'P-256' },
      bits: { type: 'string', default: '3072' },
      cn: { type: 'string', default: 'dockgate token signer' },
      days: { type: 'string', default: '3650' },
      force: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.type !== 'ec' && values.type !== 'rsa') throw new UsageError('--type must be ec or rsa');
  const days = Number(values.days);
  const bits = Number(values.bits);
  const keyPath = join(values.out, 'key.pem');
  const certPath = join(values.out, 'cert.pem');
  if (!values.force && (existsSync(keyPath) || existsSync(certPath))) {
    throw new UsageError(`${keyPath} or ${certPath} exists; pass --force to replace them`);
  }
  let generated;
  try {
    generated = generateSigningKey({
      type: values.type, curve: values.curve as 'P-256', modulusLength: bits, commonName: values.cn, days,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  mkdirSync(values.out, { recursive: true });
  writeFileSync(keyPath, generated.privateKeyPem, { mode: 0o600 });
  writeFileSync(certPath, generated.certificatePem);
  const key = loadSigningKey({ privateKey: generated.privateKeyPem, keyId: 'rfc7638' });
  io.stdout(`${keyPath}\n${certPath}\n`);
  io.stdout(`alg: ${key.alg}\nkid (libtrust, registry 2.8): ${libtrustKeyId(createPublicKey(generated.privateKeyPem))}\nkid (RFC 7638, registry 3.x): ${key.kid}\n`);
  return 0;
}
