/**
 * `dockgate/redis`: the stores that share a token service's state between instances, on one
 * Redis, Sentinel or Cluster (ioredis). A separate entry so hosts without Redis never load ioredis.
 */
export { RedisRefreshTokenStore, redisRefreshTokenStore } from '../refresh/redis-refresh-token-store.js';
export type { RedisRefreshTokenStoreOptions } from '../refresh/redis-refresh-token-store.js';
export { RedisThrottleStore, redisThrottleStore } from '../throttle/redis-throttle-store.js';
export type { RedisThrottleStoreOptions } from '../throttle/redis-throttle-store.js';
export { failFastRedisOptions, failFastClusterOptions } from './connection.js';
export type { RedisClient, RedisConnectionOptions } from './connection.js';
