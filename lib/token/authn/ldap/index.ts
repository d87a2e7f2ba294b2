/** `dockgate/ldap`: log in against an LDAP directory (ldapts), a separate entry so other hosts never load ldapts. */
export { ldapAuthenticator } from './ldap-authenticator.js';
export type { LdapAuthenticatorOptions, LdapGroupSearch, LdapTlsOptions } from './ldap-options.js';
export { escapeLdapFilterValue } from './ldap-filter.js';
