import {
  closeConnection, firstReady, openConnection, validateConnectionOptions, type RedisClient, type RedisConnectionOptions,
} from '../redis/connection.js';
import type { ThrottleLimits, ThrottleStore } from './throttle-store.js';
import { nonEmptyString } from '../../options/option-checks.js';

/** Options of {@link RedisThrottleStore}: give exactly one of `url`, `cluster` and `client`. */
export interface RedisThrottleStoreOptions extends RedisConnectionOptions {
  /** Prefix of every key the store writes; must not hold `{` or `}`. Defaults to `'dockgate:throttle:'`. */
  keyPrefix?: string;
}

/**
 * One script for the three steps over some windows of one hash slot. KEYS: the windows. ARGV:
 * step ("check", "fail" or "succeed"), the index of the window a success clears (0: none), then
 * limit and windowMs per key. Resolves to the longest remaining PTTL among the windows at or past
 * their limit (past it, for "fail"), or 0. Redis's clock times every window, so instances with
 * skewed clocks agree.
 */
const THROTTLE_SCRIPT = `
local step = ARGV[1]
local over = 0
if step == 'fail' then over = 1 end
local wait = 0
for i = 1, #KEYS do
  local limit = tonumber(ARGV[1 + 2 * i])
  local windowMs = ARGV[2 + 2 * i]
  if step == 'fail' and redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], windowMs) end
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count >= limit + over then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[i], windowMs); ttl = tonumber(windowMs) end
    if ttl > wait then wait = ttl end
  end
end
local clear = tonumber(ARGV[2])
if step == 'succeed' and wait == 0 and clear > 0 then redis.call('DEL', KEYS[clear]) end
return wait
`;

interface ThrottleCommands {
  dockgateThrottle(numberOfKeys: number, ...keysAndArgs: string[]): Promise<number>;
}

/**
 * Failed-login windows in Redis (one server, Sentinel or Cluster), so the limits hold across
 * every token-server instance. The two windows of an address carry the address as hash tag: they
 * share a cluster slot and one Lua script counts and checks them atomically, while different
 * addresses spread over the cluster. The account-wide window carries the account as its tag and
 * is counted by a second script sent with the first (one round trip each, in parallel); each is
 * atomic, so a burst still gets exactly each limit of "invalid" answers. Keys are
 * `P{<address>}:i`, `P{<address>}:a:<account>` and `P{u:<account>}:u`, expiring with their window.
 *
 * @example
 * tokenRouter({ ..., throttle: { store: redisThrottleStore({ cluster: ['10.0.0.1:7000'] }) } })
 */
export class RedisThrottleStore implements ThrottleStore {
  readonly #redis: RedisClient & ThrottleCommands;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #firstConnectWait: number;
  #everReady: boolean;

  constructor(options: RedisThrottleStoreOptions) {
    validateConnectionOptions(options, 'RedisThrottleStore');
    const prefix = nonEmptyString(options.keyPrefix ?? 'dockgate:throttle:', 'keyPrefix');
    if (/[{}]/.test(prefix)) throw new TypeError('"keyPrefix" must not hold "{" or "}": the store adds its own hash tags to spread keys over a cluster');
    this.#prefix = prefix;
    this.#firstConnectWait = options.commandTimeout ?? 1000;
    const { client, owned } = openConnection(options, 'login-throttle store');
    this.#owned = owned;
    // The number of keys varies (two windows tagged by address, one by account): given per call.
    client.defineCommand('dockgateThrottle', { lua: THROTTLE_SCRIPT });
    this.#redis = client as RedisClient & ThrottleCommands;
    this.#everReady = client.status === 'ready';
    if (!this.#everReady) client.once('ready', () => { this.#everReady = true; });
  }

  /** The ioredis client in use (the store's own, or the one it was given). */
  get client(): RedisClient {
    return this.#redis;
  }

  check(account: string, address: string, limits: ThrottleLimits): Promise<number> {
    return this.#run('check', account, address, limits);
  }

  fail(account: string, address: string, limits: ThrottleLimits): Promise<number> {
    return this.#run('fail', account, address, limits);
  }

  succeed(account: string, address: string, limits: ThrottleLimits): Promise<number> {
    return this.#run('succeed', account, address, limits);
  }

  /** Closes the connection the store opened from `url` or `cluster`; a client given by the host is left open. */
  async close(): Promise<void> {
    await closeConnection(this.#redis, this.#owned);
  }

  #keys(account: string, address: string): [string, string, string] {
    // "{" and "}" would move the hash tag; they cannot occur in an IP, but are replaced all the same.
    const tag = `${this.#prefix}{${address.replace(/[{}]/g, '_')}}:`;
    return [`${tag}a:${account}`, `${tag}i`, `${this.#prefix}{u:${account.replace(/[{}]/g, '_')}}:u`];
  }

  async #run(step: 'check' | 'fail' | 'succeed', account: string, address: string, limits: ThrottleLimits): Promise<number> {
    if (!this.#everReady) await firstReady(this.#redis, this.#firstConnectWait);
    const [a, i, u] = this.#keys(account, address);
    const window = String(limits.windowMs);
    const waits = await Promise.all([
      this.#redis.dockgateThrottle(2, a, i, step, '1', String(limits.maxFailures), window, String(limits.maxFailuresPerAddress), window),
      this.#redis.dockgateThrottle(1, u, step, '0', String(limits.maxFailuresPerAccount), String(limits.accountWindowMs)),
    ]);
    return Math.max(...waits.map(Number));
  }
}

/**
 * A {@link RedisThrottleStore} from a URL, cluster nodes or an ioredis client.
 *
 * @example
 * tokenRouter({ ..., throttle: { store: redisThrottleStore({ url: process.env.REDIS_URL! }) } })
 */
export function redisThrottleStore(options: RedisThrottleStoreOptions): RedisThrottleStore {
  return new RedisThrottleStore(options);
}
