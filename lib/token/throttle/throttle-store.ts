/** The limits a {@link ThrottleStore} enforces, from the throttle options. */
export interface ThrottleLimits {
  /** Attempts counted per (account, address) window before it blocks. */
  maxFailures: number;
  /** Attempts counted per address window, whatever the account, before it blocks. */
  maxFailuresPerAddress: number;
  /** Window length in milliseconds, from the first attempt counted in it. */
  windowMs: number;
}

/**
 * Where failed-login counts live. One store shared by every token-server instance (Redis) makes
 * the limits hold across all of them; the default keeps them in this process.
 *
 * An attempt is counted *before* the password is checked (a reservation), so concurrent
 * guesses cannot all slip through between a check and a count; a success or an attempt that
 * was never judged gives its count back. `account` and `address` arrive already shortened
 * (long values hashed).
 */
export interface ThrottleStore {
  /**
   * Atomically: when the (account, address) window or the address window is full, resolves to
   * the milliseconds until the blocking windows end, counting nothing; otherwise counts the
   * attempt in both (opening a window of `limits.windowMs` where none runs) and resolves to 0.
   * Rejects only when the store is unreachable.
   */
  take(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number>;
  /** The attempt succeeded: the (account, address) window starts over; the address window gets the attempt back. */
  succeed(account: string, address: string, now: number): Promise<void>;
  /** The attempt was not judged (the authenticator failed): both windows get it back. */
  release(account: string, address: string, now: number): Promise<void>;
}
