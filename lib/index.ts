export { DockgateError } from './errors/dockgate-error.js';
export * from './scope/index.js';
export * from './keys/index.js';
export * from './token/index.js';
export { registryTokenConfig } from './registry-config/registry-token-config.js';
export type { RegistryTokenConfigInput } from './registry-config/registry-token-config.js';
