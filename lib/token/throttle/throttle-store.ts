/** The limits a {@link ThrottleStore} enforces, from the throttle options. */
export interface ThrottleLimits {
  /** Failures per (account, address) window after which it blocks. */
  maxFailures: number;
  /** Failures per address window, whatever the account, after which it blocks. */
  maxFailuresPerAddress: number;
  /** Window length in milliseconds, from the first failure counted in it. */
  windowMs: number;
  /** Failures per account, whatever the address, after which it blocks (a slower, bigger window). */
  maxFailuresPerAccount: number;
  /** Length of the per-account window in milliseconds. */
  accountWindowMs: number;
}

/**
 * Where failed-login counts live. One store shared by every token-server instance (Redis) makes
 * the limits hold across all of them; the default keeps them in this process.
 *
 * A window is *full* when its count reaches its limit. Every method is atomic on its own and
 * resolves to the milliseconds until the blocking windows end, or 0. `account` and `address`
 * arrive already shortened (long values hashed). Methods reject only when the store is
 * unreachable.
 */
export interface ThrottleStore {
  /** Before the password check: the wait when any of the three windows is full, else 0. Counts nothing. */
  check(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number>;
  /**
   * A wrong password: counts it in the three windows — (account, address), address, and account
   * across all addresses — opening a window of its length where none runs; resolves to the wait when the count went past a limit — a guess beyond the
   * limit, from a burst that passed check() together — else 0.
   */
  fail(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number>;
  /**
   * A right password: the wait when any window is full (the login is refused), else 0 after
   * clearing the (account, address) window. The account-wide window is not cleared: one success
   * says nothing about guesses from elsewhere.
   */
  succeed(account: string, address: string, limits: ThrottleLimits, now: number): Promise<number>;
}
