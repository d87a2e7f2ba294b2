import type { Redis } from 'ioredis';
import { connectFailFast, reportConnectionError } from './redis-connection.js';
import { REVOKE_SCRIPT, REVOKE_SUBJECT_SCRIPT, SAVE_SCRIPT, USE_SCRIPT } from './redis-scripts.js';
import type { RefreshTokenRecord, RefreshTokenStore } from './refresh-token-store.js';

/** Options of {@link RedisRefreshTokenStore}: give either `url` or `client`. */
export interface RedisRefreshTokenStoreOptions {
  /**
   * `redis://[user:password@]host[:port][/db]` or `rediss://…`. The store opens its own
   * fail-fast connection (see `commandTimeout`) and closes it in {@link RedisRefreshTokenStore.close}.
   * Required unless `client` is given.
   */
  url?: string;
  /**
   * An ioredis client the host owns (Sentinel, TLS, shared connection). It is used as it is:
   * configure it with `enableOfflineQueue: false` and a `commandTimeout`, or token requests wait
   * for as long as Redis is down; and give it an 'error' listener. It must not have a
   * `keyPrefix` (use this store's). Required unless `url` is given.
   */
  client?: Redis;
  /** Prefix of every key the store writes. Defaults to `'dockgate:rt:'`. */
  keyPrefix?: string;
  /** With `url`: milliseconds before a Redis command that got no answer fails. Defaults to 1000. */
  commandTimeout?: number;
  /**
   * With `url`: told of connection failures, once per outage (the client reconnects by itself).
   * Defaults to one line on stderr, without the URL.
   */
  onConnectionError?: (err: Error) => void;
}

/** The store's Lua scripts, registered on the client with defineCommand (EVALSHA, EVAL on NOSCRIPT). */
interface StoreCommands {
  dockgateRefreshSave(tokenKey: string, subjectKey: string, ...args: string[]): Promise<number>;
  dockgateRefreshUse(tokenKey: string, now: string, idleTtlMs: string): Promise<string[] | null>;
  dockgateRefreshRevoke(tokenKey: string, subjectPrefix: string, id: string): Promise<number>;
  dockgateRefreshRevokeSubject(subjectKey: string, tokenPrefix: string): Promise<number>;
}

function validate(options: RedisRefreshTokenStoreOptions): void {
  if (options === null || typeof options !== 'object') throw new TypeError('RedisRefreshTokenStore options must be an object');
  const { url, client } = options;
  if ((url === undefined) === (client === undefined)) throw new TypeError('exactly one of "url" and "client" must be given');
  if (url !== undefined && (typeof url !== 'string' || !/^rediss?:\/\/./.test(url))) {
    throw new TypeError('"url" must be a redis:// or rediss:// URL');
  }
  if (client !== undefined) {
    if (client === null || typeof (client as Partial<Redis>).defineCommand !== 'function') throw new TypeError('"client" must be an ioredis client');
    if (client.options?.keyPrefix) throw new TypeError('"client" must not have a keyPrefix: use the store\'s "keyPrefix" option');
  }
  const prefix = options.keyPrefix ?? 'dockgate:rt:';
  if (typeof prefix !== 'string' || prefix.length === 0) throw new TypeError('"keyPrefix" must be a non-empty string');
  const timeout = options.commandTimeout ?? 1000;
  if (!Number.isInteger(timeout) || timeout < 1) throw new TypeError('"commandTimeout" must be a positive integer of milliseconds');
  if (options.onConnectionError !== undefined && typeof options.onConnectionError !== 'function') {
    throw new TypeError('"onConnectionError" must be a function');
  }
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
 * their restarts. Only the token's SHA-256 is stored, with its binding (subject, service,
 * client_id, labels); expiry is the key's TTL (idle and absolute), so nothing needs sweeping.
 * Every operation is one Lua script, atomic against other instances. While Redis is unreachable
 * every call rejects at once (the token endpoint answers 503), and the store recovers by itself.
 *
 * @example
 * const store = new RedisRefreshTokenStore({ url: 'redis://127.0.0.1:6379' });
 * app.use(tokenRouter({ ..., refreshTokens: { store } }));
 * // on shutdown
 * await store.close();
 */
export class RedisRefreshTokenStore implements RefreshTokenStore {
  readonly #redis: Redis & StoreCommands;
  readonly #owned: boolean;
  readonly #tokenPrefix: string;
  readonly #subjectPrefix: string;
  readonly #firstConnectWait: number;
  #everReady: boolean;

  constructor(options: RedisRefreshTokenStoreOptions) {
    validate(options);
    const prefix = options.keyPrefix ?? 'dockgate:rt:';
    this.#tokenPrefix = `${prefix}token:`;
    this.#subjectPrefix = `${prefix}subject:`;
    this.#firstConnectWait = options.commandTimeout ?? 1000;
    this.#owned = options.url !== undefined;
    const client = options.url !== undefined
      ? connectFailFast(options.url, this.#firstConnectWait, options.onConnectionError ?? reportConnectionError)
      : (options.client as Redis);
    client.defineCommand('dockgateRefreshSave', { numberOfKeys: 2, lua: SAVE_SCRIPT });
    client.defineCommand('dockgateRefreshUse', { numberOfKeys: 1, lua: USE_SCRIPT });
    client.defineCommand('dockgateRefreshRevoke', { numberOfKeys: 1, lua: REVOKE_SCRIPT });
    client.defineCommand('dockgateRefreshRevokeSubject', { numberOfKeys: 1, lua: REVOKE_SUBJECT_SCRIPT });
    this.#redis = client as Redis & StoreCommands;
    this.#everReady = client.status === 'ready';
    if (!this.#everReady) client.once('ready', () => { this.#everReady = true; });
  }

  /** The ioredis client in use (the store's own, or the one it was given). */
  get client(): Redis {
    return this.#redis;
  }

  async save(record: RefreshTokenRecord): Promise<void> {
    await this.#connected();
    await this.#redis.dockgateRefreshSave(
      this.#tokenPrefix + record.id, this.#subjectPrefix + record.subject,
      record.id, record.subject, record.service, record.clientId,
      record.labels ? JSON.stringify(record.labels) : '',
      String(record.createdAt), String(record.expiresAt), String(record.idleExpiresAt),
      String(Date.now()), this.#tokenPrefix,
    );
  }

  async use(id: string, now: number, idleTtlMs: number): Promise<RefreshTokenRecord | null> {
    await this.#connected();
    const flat = await this.#redis.dockgateRefreshUse(this.#tokenPrefix + id, String(now), String(idleTtlMs));
    return flat ? toRecord(id, flat) : null;
  }

  async revoke(id: string): Promise<boolean> {
    await this.#connected();
    return (await this.#redis.dockgateRefreshRevoke(this.#tokenPrefix + id, this.#subjectPrefix, id)) === 1;
  }

  async revokeSubject(subject: string): Promise<number> {
    await this.#connected();
    return this.#redis.dockgateRefreshRevokeSubject(this.#subjectPrefix + subject, this.#tokenPrefix);
  }

  /** Closes the connection the store opened from `url`; a client given by the host is left open. */
  async close(): Promise<void> {
    if (!this.#owned || this.#redis.status === 'end') return;
    try {
      await this.#redis.quit();
    } catch {
      // Redis is down: there is nothing to say goodbye to.
      this.#redis.disconnect();
    }
  }

  /**
   * Commands fail at once while disconnected (no offline queue), which would also fail the first
   * requests after start-up; so until the first connection is made, wait for it a little.
   */
  async #connected(): Promise<void> {
    if (this.#everReady) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#redis.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, this.#firstConnectWait);
      timer.unref();
      this.#redis.once('ready', done);
    });
  }
}

/**
 * A {@link RedisRefreshTokenStore} from a URL or an ioredis client.
 *
 * @example
 * tokenRouter({ ..., refreshTokens: { store: redisRefreshTokenStore({ url: process.env.REDIS_URL! }) } })
 */
export function redisRefreshTokenStore(options: RedisRefreshTokenStoreOptions): RedisRefreshTokenStore {
  return new RedisRefreshTokenStore(options);
}
