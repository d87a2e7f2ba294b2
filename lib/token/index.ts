export { tokenRouter } from './token-router.js';
export type { TokenRouter, TokenService } from './token-router.js';
export type { TokenOptions, RefreshTokenOptions } from './token-options.js';
export type { AuditEvent, AuditHook } from './audit.js';
export { OAuthError } from './oauth-error.js';
export type { OAuthErrorCode } from './oauth-error.js';
export { signAccessToken } from './access-token.js';
export type { AccessTokenGrant, SignedAccessToken } from './access-token.js';
export { MemoryRefreshTokenStore, generateRefreshToken, refreshTokenId } from './refresh/index.js';
export type { RefreshTokenRecord, RefreshTokenStore, MemoryRefreshTokenStoreOptions } from './refresh/index.js';
export { MemoryThrottleStore, RedisThrottleStore, redisThrottleStore } from './throttle/index.js';
export type {
  ThrottleOptions, ThrottleStore, ThrottleLimits, MemoryThrottleStoreOptions, RedisThrottleStoreOptions,
} from './throttle/index.js';
export { failFastRedisOptions, failFastClusterOptions } from './redis/connection.js';
export type { RedisClient, RedisConnectionOptions } from './redis/connection.js';
export * from './authn/index.js';
export * from './authz/index.js';
export { RedisRefreshTokenStore, redisRefreshTokenStore } from './refresh/index.js';
export type { RedisRefreshTokenStoreOptions } from './refresh/index.js';
