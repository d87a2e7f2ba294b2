/**
 * dockgate: Express routers and middleware for the Docker registry token protocol. The root
 * entry is what every host uses: the token service (`tokenRouter`), bearer protection
 * (`requireBearer`, `bearerGuard`), scopes, keys and errors. The engine API, each runtime
 * family, the clients and the Redis, LDAP and OIDC backends are subpaths (see the README's
 * API section), so a host that only protects routes loads none of them.
 * This file only re-exports; each folder of lib/ is one part of the protocol.
 */
export { DockgateError } from './errors/dockgate-error.js';
export { MissingPeerError } from './errors/missing-peer-error.js';
export * from './scope/index.js';
export * from './keys/index.js';
export * from './token/index.js';
export * from './bearer/index.js';
export { registryTokenConfig } from './registry-config/registry-token-config.js';
export type { RegistryTokenConfigInput } from './registry-config/registry-token-config.js';
export type { MetricsOptions } from './metrics/index.js';
export type { DockgateLogger } from './logging/index.js';
