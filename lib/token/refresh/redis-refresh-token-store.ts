import {
  closeConnection, firstReady, openConnection, validateConnectionOptions, type RedisClient, type RedisConnectionOptions,
} from '../redis/connection.js';
import { BUCKETS, bucketOf, RedisKeyLayout } from './redis-key-layout.js';
import { CAP_SCRIPT, REVOKE_SCRIPT, REVOKE_SUBJECT_SCRIPT, SAVE_SCRIPT, UNCOUNT_SCRIPT, USE_SCRIPT } from './redis-scripts.js';
import type { RefreshTokenRecord, RefreshTokenStore } from './refresh-token-store.js';
import { booleanOption, nonEmptyString } from '../../options/option-checks.js';

/**
 * Options of {@link RedisRefreshTokenStore}: give exactly one of `url` (one Redis), `cluster`
 * (Redis Cluster startup nodes) and `client` (an ioredis `Redis`, Sentinel-configured or not,
 * or `Cluster`, owned by the host).
 */
export interface RedisRefreshTokenStoreOptions extends RedisConnectionOptions {
  /**
   * Prefix of every key the store writes. It must not hold `{` or `}`: the store adds its own
   * hash tags so keys spread over a cluster's slots. Defaults to `'dockgate:rt:'`.
   */
  keyPrefix?: string;
  /**
   * Also find tokens saved by dockgate 0.1 under the old single-node layout
   * (`<prefix>token:<id>`): a token not found under the current layout is looked up there too,
   * one more round trip for unknown tokens only. Those keys expire by themselves (at most
   * `refreshTokens.absoluteTtl` after the upgrade); turn this off after that. Defaults to true.
   */
  legacyKeys?: boolean;
}

/** The store's Lua scripts, registered on the client with defineCommand (EVALSHA, EVAL on NOSCRIPT). */
interface StoreCommands {
  dockgateRefreshSave(tokenKey: string, subjectKey: string, ...args: string[]): Promise<number>;
  dockgateRefreshUse(tokenKey: string, now: string, idleTtlMs: string): Promise<string[] | null>;
  dockgateRefreshRevoke(tokenKey: string, subjectPrefix: string, id: string): Promise<string | null>;
  dockgateRefreshCap(subjectTokensKey: string, id: string, createdAt: string, cutoff: string, max: string, keepMs: string): Promise<string[]>;
  dockgateRefreshUncount(subjectTokensKey: string, id: string): Promise<number>;
  dockgateRefreshRevokeSubject(subjectKey: string, tokenPrefix: string): Promise<number>;
}

function validate(options: RedisRefreshTokenStoreOptions): void {
  validateConnectionOptions(options, 'RedisRefreshTokenStore');
  const prefix = nonEmptyString(options.keyPrefix ?? 'dockgate:rt:', 'keyPrefix');
  if (/[{}]/.test(prefix)) throw new TypeError('"keyPrefix" must not hold "{" or "}": the store adds its own hash tags to spread keys over a cluster');
  if (options.legacyKeys !== undefined) booleanOption(options.legacyKeys, 'legacyKeys');
}

function toRecord(id: string, flat: string[]): RefreshTokenRecord {
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i] as string] = flat[i + 1] as string;
  return {
    id,
    subject: hash.subject ?? '',
    service: hash.service ?? '',
    clientId: hash.clientId ?? '',
    ...(hash.labels ? { labels: JSON.parse(hash.labels) as Record<string, string[]> } : {}),
    createdAt: Number(hash.createdAt),
    expiresAt: Number(hash.expiresAt),
    idleExpiresAt: Number(hash.idleExpiresAt),
  };
}

/**
 * Refresh tokens in Redis, shared by every token-server instance pointing at it and kept across
 * their restarts: one Redis, one behind Sentinel, or a Redis Cluster. Only the token's SHA-256
 * is stored, with its binding (subject, service, client_id, labels); expiry is the key's TTL
 * (idle and absolute), so nothing needs sweeping. Every operation is a Lua script on keys of one
 * hash slot (see redis-key-layout.ts), atomic against other instances. While Redis is
 * unreachable, or a failed master is not yet replaced, calls reject at once (the token endpoint
 * answers 503), and the store recovers by itself.
 *
 * @example
 * const store = new RedisRefreshTokenStore({ url: 'redis://127.0.0.1:6379' });
 * // or { cluster: ['10.0.0.1:7000', '10.0.0.2:7000'] }, or { client: new Redis({ sentinels, name }) }
 * app.use(tokenRouter({ ..., refreshTokens: { store } }));
 * // on shutdown
 * await store.close();
 */
export class RedisRefreshTokenStore implements RefreshTokenStore {
  readonly #redis: RedisClient & StoreCommands;
  readonly #owned: boolean;
  readonly #keys: RedisKeyLayout;
  readonly #legacy: boolean;
  readonly #firstConnectWait: number;
  #everReady: boolean;

  constructor(options: RedisRefreshTokenStoreOptions) {
    validate(options);
    this.#keys = new RedisKeyLayout(options.keyPrefix ?? 'dockgate:rt:');
    this.#legacy = options.legacyKeys ?? true;
    this.#firstConnectWait = options.commandTimeout ?? 1000;
    const { client, owned } = openConnection(options, 'refresh-token store');
    this.#owned = owned;
    client.defineCommand('dockgateRefreshSave', { numberOfKeys: 2, lua: SAVE_SCRIPT });
    client.defineCommand('dockgateRefreshUse', { numberOfKeys: 1, lua: USE_SCRIPT });
    client.defineCommand('dockgateRefreshRevoke', { numberOfKeys: 1, lua: REVOKE_SCRIPT });
    client.defineCommand('dockgateRefreshRevokeSubject', { numberOfKeys: 1, lua: REVOKE_SUBJECT_SCRIPT });
    client.defineCommand('dockgateRefreshCap', { numberOfKeys: 1, lua: CAP_SCRIPT });
    client.defineCommand('dockgateRefreshUncount', { numberOfKeys: 1, lua: UNCOUNT_SCRIPT });
    this.#redis = client as RedisClient & StoreCommands;
    this.#everReady = client.status === 'ready';
    if (!this.#everReady) client.once('ready', () => { this.#everReady = true; });
  }

  /** The ioredis client in use (the store's own, or the one it was given). */
  get client(): RedisClient {
    return this.#redis;
  }

  /**
   * The token's hash first, then its place in the subject's count: a revokeSubject running in
   * between finds it in the bucket's set; the oldest tokens beyond `maxPerSubject` are then
   * revoked, each in its own bucket.
   */
  async save(record: RefreshTokenRecord, maxPerSubject?: number): Promise<void> {
    await this.#connected();
    const now = Date.now();
    const bucket = bucketOf(record.id);
    await this.#redis.dockgateRefreshSave(
      this.#keys.tokenKey(record.id), this.#keys.subjectKey(bucket, record.subject),
      record.id, record.subject, record.service, record.clientId,
      record.labels ? JSON.stringify(record.labels) : '',
      String(record.createdAt), String(record.expiresAt), String(record.idleExpiresAt),
      String(now), this.#keys.tokenPrefix(bucket),
    );
    if (maxPerSubject === undefined) return;
    const lifetime = record.expiresAt - record.createdAt;
    const evicted = await this.#redis.dockgateRefreshCap(
      this.#keys.subjectTokensKey(record.subject), record.id, String(record.createdAt),
      String(now - lifetime), String(maxPerSubject), String(Math.max(1, record.expiresAt - now)),
    );
    await Promise.all(evicted.map((id) => this.#redis.dockgateRefreshRevoke(this.#keys.tokenKey(id), this.#keys.subjectPrefix(bucketOf(id)), id)));
  }

  async use(id: string, now: number, idleTtlMs: number): Promise<RefreshTokenRecord | null> {
    await this.#connected();
    let flat = await this.#redis.dockgateRefreshUse(this.#keys.tokenKey(id), String(now), String(idleTtlMs));
    if (!flat && this.#legacy) flat = await this.#redis.dockgateRefreshUse(this.#keys.legacyTokenPrefix + id, String(now), String(idleTtlMs));
    return flat ? toRecord(id, flat) : null;
  }

  async revoke(id: string): Promise<boolean> {
    await this.#connected();
    const bucket = bucketOf(id);
    const subject = await this.#redis.dockgateRefreshRevoke(this.#keys.tokenKey(id), this.#keys.subjectPrefix(bucket), id);
    if (subject !== null) {
      await this.#redis.dockgateRefreshUncount(this.#keys.subjectTokensKey(subject), id);
      return true;
    }
    if (!this.#legacy) return false;
    return (await this.#redis.dockgateRefreshRevoke(this.#keys.legacyTokenPrefix + id, this.#keys.legacySubjectPrefix, id)) !== null;
  }

  /**
   * One script per bucket, sent together (on a cluster, to every master at once). Each bucket's
   * revocation is atomic: a token saved concurrently is either revoked or saved after it.
   */
  async revokeSubject(subject: string): Promise<number> {
    await this.#connected();
    const calls: Promise<number>[] = [];
    for (let bucket = 0; bucket < BUCKETS; bucket += 1) {
      calls.push(this.#redis.dockgateRefreshRevokeSubject(this.#keys.subjectKey(bucket, subject), this.#keys.tokenPrefix(bucket)));
    }
    if (this.#legacy) {
      calls.push(this.#redis.dockgateRefreshRevokeSubject(this.#keys.legacySubjectPrefix + subject, this.#keys.legacyTokenPrefix));
    }
    const counts = await Promise.all(calls);
    await this.#redis.del(this.#keys.subjectTokensKey(subject));
    return counts.reduce((sum, n) => sum + n, 0);
  }

  /** Closes the connection the store opened from `url` or `cluster`; a client given by the host is left open. */
  async close(): Promise<void> {
    await closeConnection(this.#redis, this.#owned);
  }

  /**
   * Commands fail at once while disconnected (no offline queue), which would also fail the first
   * requests after start-up; so until the first connection is made, wait for it a little.
   */
  async #connected(): Promise<void> {
    if (!this.#everReady) await firstReady(this.#redis, this.#firstConnectWait);
  }
}

/**
 * A {@link RedisRefreshTokenStore} from a URL, cluster nodes or an ioredis client.
 *
 * @example
 * tokenRouter({ ..., refreshTokens: { store: redisRefreshTokenStore({ url: process.env.REDIS_URL! }) } })
 */
export function redisRefreshTokenStore(options: RedisRefreshTokenStoreOptions): RedisRefreshTokenStore {
  return new RedisRefreshTokenStore(options);
}
