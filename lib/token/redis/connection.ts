import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { integerOption, optionalFunction } from '../../options/option-checks.js';

/** A Redis the stores can use: one server (plain or found through Sentinel) or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** Where a Redis-backed store connects: give exactly one of `url`, `cluster` and `client`. */
export interface RedisConnectionOptions {
  /**
   * `redis://[user:password@]host[:port][/db]` or `rediss://…` of one Redis server. The store
   * opens its own fail-fast connection (see `commandTimeout`) and closes it in `close()`.
   */
  url?: string;
  /**
   * Startup nodes of a Redis Cluster, each `host:port` (one reachable node is enough; the
   * client discovers the others). The store opens its own fail-fast Cluster connection.
   */
  cluster?: readonly string[];
  /**
   * An ioredis client the host owns: a `Redis` (plain, TLS, or Sentinel-configured with
   * `sentinels` and `name`) or a `Cluster`. It is used as it is: configure it with
   * {@link failFastRedisOptions} / {@link failFastClusterOptions} (or at least
   * `enableOfflineQueue: false` and a `commandTimeout`), or requests wait for as long as Redis
   * is down; and give it an 'error' listener. It must not have a `keyPrefix`.
   */
  client?: RedisClient;
  /** With `url` or `cluster`: milliseconds before a Redis command that got no answer fails. Defaults to 1000. */
  commandTimeout?: number;
  /**
   * With `url` or `cluster`: told of connection failures, once per outage (the client
   * reconnects by itself). Defaults to one line on stderr, without the URL.
   */
  onConnectionError?: (err: Error) => void;
}

/**
 * ioredis settings for a store that must fail fast. ioredis's defaults queue every command
 * while it reconnects, forever: a token request would hang until Redis came back. Here a
 * command fails at once when the connection is down (the token endpoint answers 503 with
 * Retry-After) and within `commandTimeout` when Redis stops answering, while the client keeps
 * reconnecting in the background so the store recovers by itself. With `sentinels` set, the
 * same options suit a Sentinel-configured client: after a failover it asks the sentinels for
 * the new master. `commandTimeout` is in milliseconds; defaults to 1000.
 *
 * @example
 * new Redis({ sentinels: [{ host: 's1', port: 26379 }], name: 'mymaster', ...failFastRedisOptions(1000) })
 */
export function failFastRedisOptions(commandTimeout = 1000): RedisOptions {
  return {
    ...nodeOptions(commandTimeout),
    enableOfflineQueue: false,
    // Reconnect forever, at most a second apart, so recovery follows Redis's return closely.
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
    // Sentinel mode: ask the sentinels again at the same pace while none answers.
    sentinelRetryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
    // Sentinel mode: a master demoted while still up (partition, manual failover) answers
    // writes with READONLY; reconnecting asks the sentinels for the new master. (ioredis's
    // failoverDetector would notice sooner, but its sentinel subscriptions outlive the client
    // after a failover in ioredis 5 and keep the process from exiting.)
    reconnectOnError: (err: Error) => err.message.startsWith('READONLY'),
  };
}

/**
 * ioredis Cluster settings with the same fail-fast behaviour as {@link failFastRedisOptions}.
 * While a master is down and before its replica is promoted, commands for its slots fail
 * (503 at the token endpoint) instead of queueing; the slot map is refreshed every second and
 * on every MOVED, so the promoted replica is found by itself. `commandTimeout` is in
 * milliseconds; defaults to 1000.
 *
 * @example
 * new Cluster([{ host: '10.0.0.1', port: 7000 }], failFastClusterOptions(1000))
 */
export function failFastClusterOptions(commandTimeout = 1000): ClusterOptions {
  return {
    enableOfflineQueue: false,
    enableReadyCheck: true,
    clusterRetryStrategy: (attempt: number) => Math.min(100 * attempt, 1000),
    // Redirections (MOVED/ASK) and retries of TRYAGAIN/CLUSTERDOWN stay few and short so a
    // request still ends within about a command timeout.
    maxRedirections: 4,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: commandTimeout,
    slotsRefreshInterval: 1000,
    redisOptions: nodeOptions(commandTimeout),
  };
}

function nodeOptions(commandTimeout: number): RedisOptions {
  return {
    // 0: commands in flight when the connection drops fail then, not after a reconnect attempt.
    maxRetriesPerRequest: 0,
    // A command whose caller already got a 503 must not run later behind its back.
    autoResendUnfulfilledCommands: false,
    commandTimeout,
    connectTimeout: Math.max(commandTimeout, 1000),
    // ioredis waits this long for a dead socket to close on disconnect, holding the process open.
    disconnectTimeout: 200,
  };
}

/** Parses `host:port` (or `[v6]:port`) startup nodes; throws a TypeError naming `name`. */
export function parseClusterNodes(nodes: unknown, name: string): { host: string; port: number }[] {
  if (!Array.isArray(nodes) || nodes.length === 0) throw new TypeError(`"${name}" must be a non-empty list of "host:port" strings`);
  return nodes.map((node) => {
    const match = typeof node === 'string' ? /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(node) : null;
    const port = match ? Number(match[3]) : NaN;
    if (!match || port < 1 || port > 65535) throw new TypeError(`"${name}" must hold "host:port" strings; got ${JSON.stringify(node)}`);
    return { host: (match[1] ?? match[2]) as string, port };
  });
}

/** Validates {@link RedisConnectionOptions} once, at construction: a TypeError names the bad option. */
export function validateConnectionOptions(options: RedisConnectionOptions, what: string): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`${what} options must be an object`);
  const { url, cluster, client } = options;
  if ([url, cluster, client].filter((v) => v !== undefined).length !== 1) {
    throw new TypeError('exactly one of "url", "cluster" and "client" must be given');
  }
  if (url !== undefined && (typeof url !== 'string' || !/^rediss?:\/\/./.test(url))) {
    throw new TypeError('"url" must be a redis:// or rediss:// URL');
  }
  if (cluster !== undefined) parseClusterNodes(cluster, 'cluster');
  if (client !== undefined) {
    if (client === null || typeof (client as Partial<Redis>).defineCommand !== 'function') {
      throw new TypeError('"client" must be an ioredis client (Redis or Cluster)');
    }
    const prefix = (client as { options?: { keyPrefix?: string; redisOptions?: { keyPrefix?: string } } }).options;
    if (prefix?.keyPrefix || prefix?.redisOptions?.keyPrefix) {
      throw new TypeError('"client" must not have a keyPrefix: use the store\'s "keyPrefix" option');
    }
  }
  integerOption(options.commandTimeout ?? 1000, 'commandTimeout', 1, undefined, 'milliseconds');
  optionalFunction(options.onConnectionError, 'onConnectionError');
}

/**
 * The client of validated `options`: the host's own, or a fail-fast connection opened from
 * `url` or `cluster`. Connection errors of an opened one go to `onConnectionError` once per
 * outage (ioredis emits one per reconnect attempt, and an unhandled 'error' event would crash
 * the process).
 */
export function openConnection(options: RedisConnectionOptions, what: string): { client: RedisClient; owned: boolean } {
  if (options.client !== undefined) return { client: options.client, owned: false };
  const timeout = options.commandTimeout ?? 1000;
  const client = options.cluster !== undefined
    ? new Cluster(parseClusterNodes(options.cluster, 'cluster'), failFastClusterOptions(timeout))
    : new Redis(options.url as string, failFastRedisOptions(timeout));
  const onError = options.onConnectionError ?? ((err: Error) => reportConnectionError(err, what));
  let reported = false;
  client.on('error', (err: Error) => {
    if (reported) return;
    reported = true;
    onError(err);
  });
  client.on('ready', () => {
    reported = false;
  });
  return { client, owned: true };
}

/** The default connection-error report: one line, never the URL (it may hold a password). */
export function reportConnectionError(err: Error, what: string): void {
  const code = (err as { code?: string }).code;
  console.error(`[dockgate] ${what}: Redis unreachable${code ? ` (${code})` : ''}: ${err.message}; reconnecting`);
}

/** Waits up to `ms` for a client's first 'ready' (commands fail at once before it: no offline queue). */
export function firstReady(client: RedisClient, ms: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    client.once('ready', done);
  });
}

/** Closes a client the store opened itself; a host's client is left open. */
export async function closeConnection(client: RedisClient, owned: boolean): Promise<void> {
  if (!owned || client.status === 'end') return;
  try {
    await client.quit();
  } catch {
    // Redis is down: there is nothing to say goodbye to.
    client.disconnect();
  }
}
