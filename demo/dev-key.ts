import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateSigningKey } from 'dockgate';

export interface KeyFiles {
  keyPath: string;
  certPath: string;
  privateKey: string;
  certificate: string;
  created: boolean;
}

/**
 * The signing key: the one given with --key/--cert, or a development key and certificate made
 * on first start in the git-ignored state folder and reused afterwards.
 */
export function loadOrCreateKey(stateDir: string, keyPath?: string, certPath?: string): KeyFiles {
  if (keyPath && certPath) {
    return { keyPath, certPath, privateKey: readFileSync(keyPath, 'utf8'), certificate: readFileSync(certPath, 'utf8'), created: false };
  }
  const devKey = join(stateDir, 'key.pem');
  const devCert = join(stateDir, 'cert.pem');
  let created = false;
  if (!existsSync(devKey) || !existsSync(devCert)) {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const generated = generateSigningKey({ commonName: 'dockgate demo signer' });
    writeFileSync(devKey, generated.privateKeyPem, { mode: 0o600 });
    writeFileSync(devCert, generated.certificatePem);
    created = true;
  }
  return { keyPath: devKey, certPath: devCert, privateKey: readFileSync(devKey, 'utf8'), certificate: readFileSync(devCert, 'utf8'), created };
}
