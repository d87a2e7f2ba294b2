import { Redis, type RedisOptions } from 'ioredis';

/**
 * ioredis settings for a store that must fail fast. ioredis's defaults queue every command
 * while it reconnects, forever: a token request would hang until Redis came back. Here a
 * command fails at once when the connection is down (the token endpoint answers 503 with
 * Retry-After) and within `commandTimeout` when Redis stops answering, while the client keeps
 * reconnecting in the background so the store recovers by itself.
 */
export function failFastRedisOptions(commandTimeout: number): RedisOptions {
  return {
    enableOfflineQueue: false,
    // 0: commands in flight when the connection drops fail then, not after a reconnect attempt.
    maxRetriesPerRequest: 0,
    // A command whose caller already got a 503 must not run later behind its back.
    autoResendUnfulfilledCommands: false,
    commandTimeout,
    connectTimeout: Math.max(commandTimeout, 1000),
    // ioredis waits this long for a dead socket to close on disconnect, holding the process open.
    disconnectTimeout: 200,
    // Reconnect forever, at most a second apart, so recovery follows Redis's return closely.
    retryStrategy: (attempt: number) => Math.min(50 * attempt, 1000),
  };
}

/**
 * Connects to `url` with {@link failFastRedisOptions}. Connection errors go to `onError` once
 * per outage (ioredis emits one per reconnect attempt, and an unhandled 'error' event would
 * crash the process).
 */
export function connectFailFast(url: string, commandTimeout: number, onError: (err: Error) => void): Redis {
  const client = new Redis(url, failFastRedisOptions(commandTimeout));
  let reported = false;
  client.on('error', (err: Error) => {
    if (reported) return;
    reported = true;
    onError(err);
  });
  client.on('ready', () => {
    reported = false;
  });
  return client;
}

/** The default connection-error report: one line, never the URL (it may hold a password). */
export function reportConnectionError(err: Error): void {
  const code = (err as { code?: string }).code;
  console.error(`[dockgate] refresh-token store: Redis unreachable${code ? ` (${code})` : ''}: ${err.message}; reconnecting`);
}
