import { createHash } from 'node:crypto';
import { MemoryThrottleStore } from './memory-throttle-store.js';
import type { ThrottleLimits, ThrottleStore } from './throttle-store.js';

/** Options of the password brute-force throttle (RFC 6749 §4.3.2). */
export interface ThrottleOptions {
  /** Failed logins allowed per account and client address within a window. Defaults to 5. */
  maxFailures?: number;
  /**
   * Failed logins allowed per client address, whatever the account, within a window: this stops
   * one address from trying one password on many accounts. Defaults to 50.
   */
  maxFailuresPerAddress?: number;
  /** Window length in seconds; a throttled caller waits until its window ends. Defaults to 900 (15 minutes). */
  windowSeconds?: number;
  /**
   * Where failures are counted. A {@link RedisThrottleStore} shared by every instance makes the
   * limits hold across all of them; while it is unreachable, each instance counts in its own
   * memory instead (fail open to per-instance limits: logins go on, still throttled, never a
   * 500 or a wait). Defaults to a {@link MemoryThrottleStore} of this instance.
   */
  store?: ThrottleStore;
  /** Most windows the in-memory store (the default, and the outage fallback) tracks; the oldest are dropped beyond it. Defaults to 100000. */
  maxKeys?: number;
}

/** A counted attempt, to settle once the password was checked. */
export interface ThrottleTicket {
  /** The password was right: the account's window at this address starts over. */
  succeeded(): Promise<void>;
  /** The attempt was not judged (the authenticator threw): it is not counted. */
  abandoned(): Promise<void>;
}

/**
 * Counts password logins in fixed windows, per (account, address) and per address. A caller
 * over either limit is refused — even with the right password — until the window ends; a
 * successful login clears its (account, address) window. Counting both keys rather than the
 * account alone means an attacker cannot lock a user out from elsewhere.
 *
 * Each attempt is counted before its password is checked and given back when it succeeds, so
 * concurrent guesses (at one instance or several sharing a store) cannot exceed the limit.
 */
export class LoginThrottle {
  readonly #limits: ThrottleLimits;
  readonly #store: ThrottleStore;
  /** Counts while the shared store is unreachable. */
  readonly #fallback: ThrottleStore;
  readonly #onError: (err: unknown) => void;
  #outage = false;

  constructor(options: ThrottleOptions = {}, onError: (err: unknown) => void = () => {}) {
    this.#limits = {
      maxFailures: positiveInteger(options.maxFailures ?? 5, 'throttle.maxFailures'),
      maxFailuresPerAddress: positiveInteger(options.maxFailuresPerAddress ?? 50, 'throttle.maxFailuresPerAddress'),
      windowMs: positiveInteger(options.windowSeconds ?? 900, 'throttle.windowSeconds') * 1000,
    };
    const maxKeys = positiveInteger(options.maxKeys ?? 100_000, 'throttle.maxKeys');
    const store = options.store;
    if (store !== undefined) {
      for (const method of ['take', 'succeed', 'release'] as const) {
        if (typeof store?.[method] !== 'function') throw new TypeError(`"throttle.store" must implement ${method}()`);
      }
    }
    this.#fallback = new MemoryThrottleStore({ maxKeys });
    this.#store = store ?? this.#fallback;
    this.#onError = onError;
  }

  /**
   * Counts one attempt of `account` from `address`: resolves to the seconds to wait when over a
   * limit (nothing counted), else to a ticket to settle after the password check.
   */
  async take(account: string, address: string, now = Date.now()): Promise<number | ThrottleTicket> {
    const a = short(account);
    const i = short(address);
    let store = this.#store;
    let wait: number;
    try {
      wait = await store.take(a, i, this.#limits, now);
      this.#outage = false;
    } catch (err) {
      this.#report(err);
      store = this.#fallback;
      wait = await store.take(a, i, this.#limits, now);
    }
    if (wait > 0) return Math.ceil(wait / 1000);
    const started = Date.now();
    const settle = (step: 'succeed' | 'release') => async () => {
      try {
        await store[step](a, i, now + Date.now() - started);
      } catch (err) {
        // The login's answer is already decided; a lost give-back only costs the caller one count.
        this.#report(err);
      }
    };
    return { succeeded: settle('succeed'), abandoned: settle('release') };
  }

  /** Reports the first failure of an outage, not one line per login. */
  #report(err: unknown): void {
    if (this.#outage) return;
    this.#outage = true;
    this.#onError(Object.assign(new Error(`login throttle: the shared store is unreachable; counting in this instance until it returns (${(err as Error)?.message ?? String(err)})`), { cause: err }));
  }
}

// Usernames may be up to 4096 characters: long ones are hashed so windows' keys stay small.
const short = (value: string): string => (value.length > 128 ? createHash('sha256').update(value).digest('base64url') : value);

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`"${name}" must be a positive integer`);
  return value;
}
