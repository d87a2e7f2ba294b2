import { createHash } from 'node:crypto';

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
  /** Most keys tracked at once; the oldest windows are dropped beyond it. Defaults to 100000. */
  maxKeys?: number;
}

interface Window {
  failures: number;
  resetAt: number;
}

/**
 * Counts failed password logins in fixed windows, per (account, address) and per address. A
 * caller over either limit is refused — even with the right password — until the window ends;
 * a successful login clears its (account, address) window. Counting both keys rather than the
 * account alone means an attacker cannot lock a user out from elsewhere.
 */
export class LoginThrottle {
  readonly #windows = new Map<string, Window>();
  readonly #maxFailures: number;
  readonly #maxPerAddress: number;
  readonly #windowMs: number;
  readonly #maxKeys: number;

  constructor(options: ThrottleOptions = {}) {
    this.#maxFailures = positiveInteger(options.maxFailures ?? 5, 'throttle.maxFailures');
    this.#maxPerAddress = positiveInteger(options.maxFailuresPerAddress ?? 50, 'throttle.maxFailuresPerAddress');
    this.#windowMs = positiveInteger(options.windowSeconds ?? 900, 'throttle.windowSeconds') * 1000;
    this.#maxKeys = positiveInteger(options.maxKeys ?? 100_000, 'throttle.maxKeys');
  }

  /** Seconds the caller must wait, or 0 when it may try. */
  retryAfter(account: string, address: string, now = Date.now()): number {
    const wait = Math.max(
      this.#wait(accountKey(account, address), this.#maxFailures, now),
      this.#wait(addressKey(address), this.#maxPerAddress, now),
    );
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  /** Records a failed login. */
  fail(account: string, address: string, now = Date.now()): void {
    this.#count(accountKey(account, address), now);
    this.#count(addressKey(address), now);
  }

  /** Records a successful login: the account's window at this address starts over. */
  succeed(account: string, address: string): void {
    this.#windows.delete(accountKey(account, address));
  }

  #wait(key: string, limit: number, now: number): number {
    const window = this.#windows.get(key);
    if (!window) return 0;
    if (now >= window.resetAt) {
      this.#windows.delete(key);
      return 0;
    }
    return window.failures >= limit ? window.resetAt - now : 0;
  }

  #count(key: string, now: number): void {
    const window = this.#windows.get(key);
    if (window && now < window.resetAt) {
      window.failures += 1;
      return;
    }
    this.#windows.delete(key);
    if (this.#windows.size >= this.#maxKeys) {
      const oldest = this.#windows.keys().next().value as string;
      this.#windows.delete(oldest);
    }
    this.#windows.set(key, { failures: 1, resetAt: now + this.#windowMs });
  }
}

// Usernames may be up to 4096 characters: long ones are hashed so 100000 windows stay small.
const short = (value: string): string => (value.length > 128 ? createHash('sha256').update(value).digest('base64url') : value);

function accountKey(account: string, address: string): string {
  return `a\u0000${short(account)}\u0000${short(address)}`;
}

function addressKey(address: string): string {
  return `i\u0000${short(address)}`;
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new TypeError(`"${name}" must be a positive integer`);
  return value;
}
