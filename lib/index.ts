/**
 * dockgate: Express routers and middleware for the Docker registry token protocol
 * (`tokenRouter`, `requireBearer`) and a versioned Docker Engine API (`engineRouter`).
 * This file only re-exports; each folder of lib/ is one part of the protocol.
 */
export { DockgateError } from './errors/dockgate-error.js';
export * from './scope/index.js';
export * from './keys/index.js';
export * from './token/index.js';
export * from './bearer/index.js';
export * from './engine/index.js';
export * from './client/index-engine.js';
export * from './client/registry/index.js';
export { registryTokenConfig } from './registry-config/registry-token-config.js';
export type { RegistryTokenConfigInput } from './registry-config/registry-token-config.js';
export { resolveMetrics, dockgateMetrics } from './metrics/index.js';
export type { MetricsOptions, DockgateMetrics, BearerResult, RunningContainers } from './metrics/index.js';
export type { DockgateLogger } from './logging/index.js';
