/**
 * `dockgate/redis`: the stores that share a token service's state between instances, on one
 * Redis, Sentinel or Cluster (ioredis). A separate entry so hosts without Redis never load ioredis.
 */
export { RedisRefreshTokenStore, redisRefreshTokenStore } from '../token/refresh/redis-refresh-token-store.js';
export type { RedisRefreshTokenStoreOptions } from '../token/refresh/redis-refresh-token-store.js';
export { RedisThrottleStore, redisThrottleStore } from '../token/throttle/redis-throttle-store.js';
export type { RedisThrottleStoreOptions } from '../token/throttle/redis-throttle-store.js';
export { failFastRedisOptions, failFastClusterOptions } from '../token/redis/connection.js';
export type { RedisClient, RedisConnectionOptions } from '../token/redis/connection.js';
