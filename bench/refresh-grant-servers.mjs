// Child process of refresh-grant.mjs: one tokenRouter with the refresh-token store named in argv,
// on 127.0.0.1. Each contender runs in a process of its own (in one process, whichever server
// was created second measured ~1.5x faster even with identical stores), and apart from the load
// generator (autocannon, in the parent). Only `refreshTokens.store` differs:
//   memory — MemoryRefreshTokenStore (the default);
//   redis  — RedisRefreshTokenStore on BENCH_REDIS_URL (defaults to redis://127.0.0.1:6379),
//            under a key prefix of its own that is deleted on "stop";
//   cluster — RedisRefreshTokenStore on the Redis Cluster whose nodes are in BENCH_REDIS_CLUSTER
//            (host:port,…; the parent starts a throwaway one).
// Usage: node refresh-grant-servers.mjs memory|redis|cluster. Sends { port } over IPC when
// listening and exits on "stop".
import { randomBytes } from 'node:crypto';
import express from 'express';
import { Redis } from 'ioredis';
import { generateSigningKey, MemoryRefreshTokenStore, tokenRouter } from '../dist/index.js';
import { RedisRefreshTokenStore } from '../dist/redis/index.js';

export const ISSUER = 'dockgate-bench';
export const SERVICE = 'registry.bench';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY_PREFIX = `dockgate-bench:${randomBytes(4).toString('hex')}:`;

const { privateKeyPem, certificatePem } = generateSigningKey();

function app(store) {
  const router = tokenRouter({
    issuer: ISSUER,
    service: SERVICE,
    keys: { privateKey: privateKeyPem, certificateChain: certificatePem },
    // Cheap on purpose: only the password grant that obtains the refresh token authenticates.
    authenticate: async ({ username }) => ({ subject: username }),
    authorize: ({ scopes }) => scopes,
    refreshTokens: { store },
    throttle: false,
    audit: () => {},
  });
  return express().use(router);
}

function listen(handler) {
  return new Promise((resolve, reject) => {
    const server = handler.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(server)));
  });
}

const name = process.argv[2];
if (!['memory', 'redis', 'cluster'].includes(name)) throw new TypeError('usage: refresh-grant-servers.mjs memory|redis|cluster');
const redisStore = name === 'redis'
  ? new RedisRefreshTokenStore({ url: REDIS_URL, keyPrefix: KEY_PREFIX })
  : name === 'cluster' ? new RedisRefreshTokenStore({ cluster: process.env.BENCH_REDIS_CLUSTER.split(','), keyPrefix: KEY_PREFIX }) : undefined;
const server = await listen(app(redisStore ?? new MemoryRefreshTokenStore()));
process.send({ port: server.address().port });

process.on('message', async (message) => {
  if (message !== 'stop') return;
  server.closeAllConnections();
  server.close();
  if (!redisStore) process.exit(0);
  await redisStore.close();
  // The throwaway cluster is deleted whole by the parent.
  if (name === 'cluster') process.exit(0);
  const cleanup = new Redis(REDIS_URL);
  let cursor = '0';
  do {
    const [next, keys] = await cleanup.scan(cursor, 'MATCH', `${KEY_PREFIX}*`, 'COUNT', 1000);
    if (keys.length > 0) await cleanup.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await cleanup.quit();
  process.exit(0);
});
