import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadSigningKey, splitCertificates } from '../keys/index.js';
import { registryTokenConfig } from '../registry-config/registry-token-config.js';
import { UsageError, type CliIo } from './io.js';

export const registryConfigHelp = `Usage: dockgate registry-config --cert FILE --issuer NAME --service NAME --realm URL [--key FILE]

Prints the auth.token block of a distribution registry's config.yml that makes it trust tokens
signed by the key of certificate FILE. With --key, checks that the certificate holds that key.
`;

/** `dockgate registry-config`: prints the registry's `auth.token` block. */
export async function registryConfig(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { cert: { type: 'string' }, key: { type: 'string' }, issuer: { type: 'string' }, service: { type: 'string' }, realm: { type: 'string' } },
    strict: true,
  });
  if (!values.cert || !values.issuer || !values.service || !values.realm) throw new UsageError('--cert, --issuer, --service and --realm are required');
  const certPath = resolve(values.cert);
  let pem: string;
  try {
    pem = readFileSync(certPath, 'utf8');
    splitCertificates(pem);
    if (values.key) loadSigningKey({ privateKey: readFileSync(values.key), certificateChain: pem });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  try {
    io.stdout(registryTokenConfig({ realm: values.realm, service: values.service, issuer: values.issuer, rootCertBundle: certPath }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return 0;
}
