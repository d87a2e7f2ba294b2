export type { AccountStatus, AuthenticationRequest, Identity, Authenticator } from './types.js';
export { htpasswdAuthenticator } from './htpasswd-authenticator.js';
export type { HtpasswdSource, HtpasswdOptions } from './htpasswd-authenticator.js';
export { hashPassword, htpasswdLine } from './htpasswd-line.js';
export { HtpasswdFormatError } from './htpasswd-format-error.js';
export { AuthenticatorUnavailableError } from './authenticator-unavailable-error.js';
export { chainAuthenticators } from './chain-authenticators.js';
export { AuthenticatorResultError } from './authenticator-result-error.js';
