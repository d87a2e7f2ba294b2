import { readFileSync } from 'node:fs';
import { chainAuthenticators, htpasswdAuthenticator, type Authenticator } from 'dockgate';
import { ldapAuthenticator } from 'dockgate/ldap';
import { oidcAuthenticator, type OidcIssuerOptions } from 'dockgate/oidc';
import { DemoUsageError, type DemoOptions } from './options.js';

/** The --oidc-claims file: `{ "account": "CLAIM", "labels": { "LABEL": "CLAIM" } }`. */
function claimsMapping(file: string | undefined): Pick<OidcIssuerOptions, 'account' | 'labels'> {
  if (!file) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new DemoUsageError(`--oidc-claims ${file}: ${(err as Error).message}`);
  }
  const { account, labels, ...rest } = (parsed ?? {}) as { account?: unknown; labels?: unknown };
  const unknown = Object.keys(rest);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || unknown.length > 0) {
    throw new DemoUsageError(`--oidc-claims ${file}: must be {"account":"CLAIM","labels":{"LABEL":"CLAIM"}}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}`);
  }
  return { ...(account !== undefined ? { account: account as string } : {}), ...(labels !== undefined ? { labels: labels as Record<string, string> } : {}) };
}

/**
 * Who may log in to the demo: ID tokens of --oidc-issuer (as `oidc`), then --ldap users, then
 * the --users htpasswd file — the first that knows the credentials decides (chainAuthenticators).
 */
export function demoAuthenticator(options: DemoOptions): Authenticator {
  const chain: Authenticator[] = [];
  if (options.oidc) {
    const mapping = claimsMapping(options.oidc.claimsFile);
    chain.push(oidcAuthenticator({ issuers: options.oidc.issuers.map((issuer) => ({ issuer, audience: options.oidc!.audience, ...mapping })) }));
  }
  if (options.ldap) {
    const ldap = options.ldap;
    const bindPassword = ldap.bindPasswordFile ? readFileSync(ldap.bindPasswordFile, 'utf8').replace(/\r?\n$/, '') : undefined;
    chain.push(ldapAuthenticator({
      url: ldap.url,
      baseDN: ldap.baseDN,
      userFilter: ldap.userFilter,
      groupAttribute: ldap.groupAttribute,
      ...(ldap.bindDN ? { bindDN: ldap.bindDN, bindPassword } : {}),
      ...(ldap.caFile || ldap.startTLS ? { tls: { ...(ldap.caFile ? { ca: readFileSync(ldap.caFile) } : {}), startTLS: ldap.startTLS } } : {}),
    }));
  }
  chain.push(htpasswdAuthenticator({ file: options.users }));
  return chain.length === 1 ? chain[0]! : chainAuthenticators(...chain);
}
