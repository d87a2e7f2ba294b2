/** `dockgate/oidc`: CI workload identity, `docker login -u oidc` with an ID token verified against its issuer. */
export { oidcAuthenticator } from './oidc-authenticator.js';
export type { OidcAuthenticatorOptions, OidcIssuerOptions, OidcClaims } from './oidc-options.js';
