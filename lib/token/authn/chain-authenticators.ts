import type { AccountStatus, Authenticator } from './types.js';

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
 * `lookup` (refresh grants) asks in the same order: `active` or `disabled` decides, `unknown`
 * passes on. A member without `lookup` might own the account, so when one was passed and none
 * decided the answer is "cannot tell" (undefined); only when every member can tell and none
 * knows the subject is it `unknown`. `throttleKey` is the first member's that gives one.
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
  const chained: Authenticator = async (request) => {
    for (const authenticate of chain) {
      const verdict = await authenticate(request);
      if (verdict !== undefined) return verdict;
    }
    return undefined;
  };
  if (chain.some((authenticate) => authenticate.lookup)) {
    chained.lookup = async (subject) => {
      let cannotTell = false;
      for (const authenticate of chain) {
        const status: AccountStatus | undefined = authenticate.lookup ? await authenticate.lookup(subject) : undefined;
        if (status === 'active' || status === 'disabled') return status;
        if (status === undefined) cannotTell = true;
      }
      return cannotTell ? undefined : 'unknown';
    };
  }
  if (chain.some((authenticate) => authenticate.throttleKey)) {
    chained.throttleKey = (request) => {
      for (const authenticate of chain) {
        const key = authenticate.throttleKey?.(request);
        if (key !== undefined) return key;
      }
      return undefined;
    };
  }
  return chained;
}
