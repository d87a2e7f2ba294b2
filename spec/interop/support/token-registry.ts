import { aclAuthorizer, generateSigningKey, htpasswdAuthenticator, htpasswdLine, ownNamespaceAcl } from '../../../lib/index.js';
import { startRegistry, type RunningRegistry } from './registry.js';
import { startTokenServer, type RunningTokenServer } from './token-server.js';

/** What {@link startTokenRegistry} needs: the names both sides agree on and alice's password. */
export interface TokenRegistryOptions {
  issuer: string;
  service: string;
  /** The password of `alice`, the one account. */
  password: string;
}

/**
 * The pair the pull and push specs run against: a token service with one account (`alice`, a
 * cost-4 bcrypt line) and the own-namespace ACL, and a registry 2.8 trusting its fresh key.
 * The caller stops both.
 *
 * @example
 * const { token, registry } = await startTokenRegistry({ issuer: ISSUER, service: SERVICE, password: PASSWORD });
 */
export async function startTokenRegistry(options: TokenRegistryOptions): Promise<{ token: RunningTokenServer; registry: RunningRegistry }> {
  const { issuer, service, password } = options;
  const { privateKeyPem, certificatePem } = generateSigningKey();
  const token = await startTokenServer({
    issuer,
    service,
    keys: { privateKey: privateKeyPem, certificateChain: certificatePem },
    authenticate: htpasswdAuthenticator({ content: await htpasswdLine('alice', password, 4) }),
    authorize: aclAuthorizer(ownNamespaceAcl()),
  });
  try {
    const registry = await startRegistry({ service, issuer, realm: token.realm, certPem: certificatePem });
    return { token, registry };
  } catch (err) {
    await token.stop();
    throw err;
  }
}
