import type { ThrottleLimits, ThrottleStore } from './throttle-store.js';
import { integerOption } from '../../options/option-checks.js';

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
 * its own, so N instances allow N times the limit; share a RedisThrottleStore instead.
 */
export class MemoryThrottleStore implements ThrottleStore {
  readonly #windows = new Map<string, Window>();
  readonly #maxKeys: number;

  constructor(options: MemoryThrottleStoreOptions = {}) {
    const max = integerOption(options.maxKeys ?? 100_000, 'maxKeys', 1);
    this.#maxKeys = max;
  }

  async check(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number> {
    return this.#wait(account, address, limits, now, 0);
  }

  async fail(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number> {
    this.#count(accountKey(account, address), limits.windowMs, now);
    this.#count(addressKey(address), limits.windowMs, now);
    this.#count(everywhereKey(account), limits.accountWindowMs, now);
    return this.#wait(account, address, limits, now, 1);
  }

  async succeed(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number> {
    const wait = this.#wait(account, address, limits, now, 0);
    if (wait === 0) this.#windows.delete(accountKey(account, address));
    return wait;
  }

  /** The wait when a window's count is at least its limit plus `over`, else 0. */
  #wait(account: string, address: string, limits: ThrottleLimits, now: number, over: number): number {
    return Math.max(
      this.#windowWait(accountKey(account, address), limits.maxFailures + over, now),
      this.#windowWait(addressKey(address), limits.maxFailuresPerAddress + over, now),
      this.#windowWait(everywhereKey(account), limits.maxFailuresPerAccount + over, now),
    );
  }

  #windowWait(key: string, limit: number, now: number): number {
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
}

const accountKey = (account: string, address: string): string => `a\u0000${account}\u0000${address}`;
const addressKey = (address: string): string => `i\u0000${address}`;
const everywhereKey = (account: string): string => `u\u0000${account}`;
