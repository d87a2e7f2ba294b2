export type { RefreshTokenRecord, RefreshTokenStore } from './refresh-token-store.js';
export { MemoryRefreshTokenStore } from './memory-refresh-token-store.js';
export type { MemoryRefreshTokenStoreOptions } from './memory-refresh-token-store.js';
export { generateRefreshToken, refreshTokenId } from './refresh-token.js';
