/** `dockgate/client/registry`: the client side of the token protocol (challenge, token fetch, a fetch that answers 401s). */
export { parseChallenge, parseChallenges } from './parse-challenge.js';
export type { AuthChallenge, BearerChallenge } from './parse-challenge.js';
export { fetchToken } from './fetch-token.js';
export type { TokenRequest, TokenResponse, TokenGrant } from './fetch-token.js';
export { RegistryTokenClient } from './registry-token-client.js';
export type { RegistryCredentials, RegistryTokenClientOptions } from './registry-token-client.js';
export { TokenFetchError } from './token-fetch-error.js';
