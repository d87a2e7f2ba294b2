import { createHash } from 'node:crypto';
import { MemoryThrottleStore } from './memory-throttle-store.js';
import type { ThrottleLimits, ThrottleStore } from './throttle-store.js';
import { integerOption } from '../../options/option-checks.js';

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
   * Failed logins allowed per account from all addresses together within `accountWindowSeconds`:
   * guesses spread over many addresses (a botnet, or a rotating `X-Forwarded-For` behind a
   * too-trusting proxy) still meet a limit. Larger than the others, since reaching it refuses the
   * account everywhere, right password or not, until the window ends. Defaults to 100.
   */
  maxFailuresPerAccount?: number;
  /** Length of the per-account window in seconds. Defaults to 3600 (one hour). */
  accountWindowSeconds?: number;
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

type Step = 'check' | 'fail' | 'succeed';

/**
 * Counts failed password logins in fixed windows, per (account, address), per address, and per
 * account across all addresses. A caller over any limit is refused — even with the right
 * password — until the window ends; a successful login clears its (account, address) window.
 * The tight limits are keyed by address, so an attacker cannot lock a user out from elsewhere
 * with a few guesses; the account-wide window is larger and longer, the ceiling for guesses
 * spread over many addresses, and the price is that flooding it refuses the account everywhere
 * until it ends.
 *
 * Each verdict is checked against the counts at the time it is given, not only before the
 * password check: of a burst of guesses that passed the first check together, those that go past
 * the limit are answered 429 like later ones, so no more than the limit of wrong passwords is
 * ever answered as such within a window, at one instance or several sharing a store. Parallel
 * right passwords are not held back (nothing is reserved before the check).
 */
export class LoginThrottle {
  readonly #limits: ThrottleLimits;
  readonly #store: ThrottleStore;
  /** Counts while the shared store is unreachable. */
  readonly #fallback: ThrottleStore;
  readonly #onError: (err: unknown) => void;
  readonly #onStoreFailure: () => void;
  #outage = false;

  /** `onError` hears the first failure of a store outage; `onStoreFailure` every failed call (for a metric). */
  constructor(options: ThrottleOptions = {}, onError: (err: unknown) => void = () => {}, onStoreFailure: () => void = () => {}) {
    this.#limits = {
      maxFailures: positiveInteger(options.maxFailures ?? 5, 'throttle.maxFailures'),
      maxFailuresPerAddress: positiveInteger(options.maxFailuresPerAddress ?? 50, 'throttle.maxFailuresPerAddress'),
      windowMs: positiveInteger(options.windowSeconds ?? 900, 'throttle.windowSeconds') * 1000,
      maxFailuresPerAccount: positiveInteger(options.maxFailuresPerAccount ?? 100, 'throttle.maxFailuresPerAccount'),
      accountWindowMs: positiveInteger(options.accountWindowSeconds ?? 3600, 'throttle.accountWindowSeconds') * 1000,
    };
    const maxKeys = positiveInteger(options.maxKeys ?? 100_000, 'throttle.maxKeys');
    const store = options.store;
    if (store !== undefined) {
      for (const method of ['check', 'fail', 'succeed'] as const) {
        if (typeof store?.[method] !== 'function') throw new TypeError(`"throttle.store" must implement ${method}()`);
      }
    }
    this.#fallback = new MemoryThrottleStore({ maxKeys });
    this.#store = store ?? this.#fallback;
    this.#onError = onError;
    this.#onStoreFailure = onStoreFailure;
  }

  /** Before the password check: seconds the caller must wait, or 0 when it may try. */
  check(account: string, address: string, now = Date.now()): Promise<number> {
    return this.#step('check', account, address, now);
  }

  /** A wrong password, counted: seconds to wait when it went past the limit (answer 429, not "invalid"), else 0. */
  failed(account: string, address: string, now = Date.now()): Promise<number> {
    return this.#step('fail', account, address, now);
  }

  /** A right password: seconds to wait when the limit was reached meanwhile, else 0 (the account's window starts over). */
  succeeded(account: string, address: string, now = Date.now()): Promise<number> {
    return this.#step('succeed', account, address, now);
  }

  async #step(step: Step, account: string, address: string, now: number): Promise<number> {
    const a = short(account);
    const i = short(address);
    let wait: number;
    try {
      wait = await this.#store[step](a, i, this.#limits, now);
      this.#outage = false;
    } catch (err) {
      // Fail open to per-instance limits: the login goes on, counted in this process's memory.
      this.#onStoreFailure();
      this.#report(err);
      wait = await this.#fallback[step](a, i, this.#limits, now);
    }
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
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
  return integerOption(value, name, 1);
}
