import type { ThrottleLimits, ThrottleStore } from './throttle-store.js';

/** Options of {@link MemoryThrottleStore}. */
export interface MemoryThrottleStoreOptions {
  /** Most windows tracked at once; the oldest are dropped beyond it. Defaults to 100000. */
  maxKeys?: number;
}

interface Window {
  count: number;
  resetAt: number;
}

/**
 * The default throttle store: fixed windows in a Map of this process. Each instance counts on
 * its own, so N instances allow N times the limit; share a {@link RedisThrottleStore} instead.
 */
export class MemoryThrottleStore implements ThrottleStore {
  readonly #windows = new Map<string, Window>();
  readonly #maxKeys: number;

  constructor(options: MemoryThrottleStoreOptions = {}) {
    const max = options.maxKeys ?? 100_000;
    if (!Number.isInteger(max) || max < 1) throw new TypeError('"maxKeys" must be a positive integer');
    this.#maxKeys = max;
  }

  async take(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number> {
    const a = accountKey(account, address);
    const i = addressKey(address);
    const wait = Math.max(this.#wait(a, limits.maxFailures, now), this.#wait(i, limits.maxFailuresPerAddress, now));
    if (wait > 0) return wait;
    this.#count(a, limits.windowMs, now);
    this.#count(i, limits.windowMs, now);
    return 0;
  }

  async succeed(account: string, address: string, now: number): Promise<void> {
    this.#windows.delete(accountKey(account, address));
    this.#giveBack(addressKey(address), now);
  }

  async release(account: string, address: string, now: number): Promise<void> {
    this.#giveBack(accountKey(account, address), now);
    this.#giveBack(addressKey(address), now);
  }

  #wait(key: string, limit: number, now: number): number {
    const window = this.#windows.get(key);
    if (!window) return 0;
    if (now >= window.resetAt) {
      this.#windows.delete(key);
      return 0;
    }
    return window.count >= limit ? window.resetAt - now : 0;
  }

  #count(key: string, windowMs: number, now: number): void {
    const window = this.#windows.get(key);
    if (window && now < window.resetAt) {
      window.count += 1;
      return;
    }
    this.#windows.delete(key);
    if (this.#windows.size >= this.#maxKeys) {
      // Map keeps insertion order: the first key is the oldest window.
      const oldest = this.#windows.keys().next().value as string;
      this.#windows.delete(oldest);
    }
    this.#windows.set(key, { count: 1, resetAt: now + windowMs });
  }

  #giveBack(key: string, now: number): void {
    const window = this.#windows.get(key);
    if (window && now < window.resetAt && window.count > 0) window.count -= 1;
  }
}

const accountKey = (account: string, address: string): string => `a\u0000${account}\u0000${address}`;
const addressKey = (address: string): string => `i\u0000${address}`;
