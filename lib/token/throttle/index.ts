export { LoginThrottle } from './login-throttle.js';
export type { ThrottleOptions } from './login-throttle.js';
export type { ThrottleLimits, ThrottleStore } from './throttle-store.js';
export { MemoryThrottleStore } from './memory-throttle-store.js';
export type { MemoryThrottleStoreOptions } from './memory-throttle-store.js';
