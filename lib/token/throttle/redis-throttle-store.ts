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
 * One script for the three steps. KEYS: (account, address) window, address window. ARGV: step
 * ("check", "fail" or "succeed"), maxFailures, maxFailuresPerAddress, windowMs. Resolves to the
 * longest remaining PTTL among the windows at or past their limit (past it, for "fail"), or 0.
 * Redis's clock times every window, so instances with skewed clocks agree.
 */
const THROTTLE_SCRIPT = `
local step = ARGV[1]
if step == 'fail' then
  for i = 1, 2 do
    if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[4]) end
  end
end
local over = 0
if step == 'fail' then over = 1 end
local wait = 0
for i = 1, 2 do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count >= tonumber(ARGV[i + 1]) + over then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[i], ARGV[4]); ttl = tonumber(ARGV[4]) end
    if ttl > wait then wait = ttl end
  end
end
if step == 'succeed' and wait == 0 then redis.call('DEL', KEYS[1]) end
return wait
`;

interface ThrottleCommands {
  dockgateThrottle(accountKey: string, addressKey: string, step: string, max: string, maxPerAddress: string, windowMs: string): Promise<number>;
}

/**
 * Failed-login windows in Redis (one server, Sentinel or Cluster), so the limits hold across
 * every token-server instance. Both windows of an attempt carry the address as hash tag: they
 * share a cluster slot and one Lua script counts and checks them atomically, in one round trip,
 * while different addresses spread over the cluster. Keys are `P{<address>}:i` and
 * `P{<address>}:a:<account>`, expiring with their window.
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
    client.defineCommand('dockgateThrottle', { numberOfKeys: 2, lua: THROTTLE_SCRIPT });
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

  #keys(account: string, address: string): [string, string] {
    // "{" and "}" in an address would move the hash tag; they cannot occur in an IP, but are replaced all the same.
    const tag = `${this.#prefix}{${address.replace(/[{}]/g, '_')}}:`;
    return [`${tag}a:${account}`, `${tag}i`];
  }

  async #run(step: 'check' | 'fail' | 'succeed', account: string, address: string, limits: ThrottleLimits): Promise<number> {
    if (!this.#everReady) await firstReady(this.#redis, this.#firstConnectWait);
    const [a, i] = this.#keys(account, address);
    return Number(await this.#redis.dockgateThrottle(a, i, step, String(limits.maxFailures), String(limits.maxFailuresPerAddress), String(limits.windowMs)));
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
