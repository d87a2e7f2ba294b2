import type { Authenticator } from './types.js';

/**
 * One {@link Authenticator} made of several, asked in order. The first that recognizes the
 * credentials decides: an identity logs in, null refuses — the next ones are not asked. Only
 * undefined ("not mine": an unknown user, an ID token of another issuer) passes to the next;
 * when none recognizes them the result is undefined, which the router refuses.
 *
 * A throw stops the chain and is the chain's answer: a directory that is down answers 503
 * rather than being skipped in favour of the next backend, which could otherwise let a
 * same-named account of a weaker backend log in while the real one is unreachable.
 *
 * @throws {TypeError} at construction when an argument is not a function.
 * @example
 * const authenticate = chainAuthenticators(
 *   oidcAuthenticator({ issuers: [{ issuer: 'https://token.actions.githubusercontent.com', audience: 'registry.example.com' }] }),
 *   ldapAuthenticator({ url: 'ldaps://dir.example.com', baseDN: 'ou=people,dc=example,dc=com' }),
 *   htpasswdAuthenticator({ file: '/etc/dockgate/htpasswd' }),
 * );
 */
export function chainAuthenticators(...authenticators: Authenticator[]): Authenticator {
  if (authenticators.length === 0) throw new TypeError('chainAuthenticators needs at least one authenticator');
  authenticators.forEach((authenticate, index) => {
    if (typeof authenticate !== 'function') throw new TypeError(`chainAuthenticators argument #${index} must be an authenticator function`);
  });
  const chain = [...authenticators];
  return async (request) => {
    for (const authenticate of chain) {
      const verdict = await authenticate(request);
      if (verdict !== undefined) return verdict;
    }
    return undefined;
  };
}
