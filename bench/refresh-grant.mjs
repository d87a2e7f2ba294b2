// Tokens per second of the refresh_token grant with the Redis refresh-token store, against the
// in-memory store measured in the same run (same router, key and request; only the store
// differs). The request is what `docker pull` sends holding an identity token. Load comes from
// autocannon over 127.0.0.1, bounded in time; each store is measured ROUNDS times in alternating
// order, and the ratio of the means is printed.
//
//   npm run bench:refresh                     (builds dist/ first; needs redis-server on 6379)
//   BENCH_REDIS_URL=redis://127.0.0.1:6380 BENCH_WARMUP=3 BENCH_DURATION=8 BENCH_ROUNDS=2 BENCH_CONNECTIONS=10
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchNumber } from './support/bench-number.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const WARMUP = benchNumber('BENCH_WARMUP', 3);
const DURATION = benchNumber('BENCH_DURATION', 8);
const ROUNDS = benchNumber('BENCH_ROUNDS', 2);
const CONNECTIONS = benchNumber('BENCH_CONNECTIONS', 10);
const SERVICE = 'registry.bench';
const HEADERS = { 'content-type': 'application/x-www-form-urlencoded' };

function startServer(name) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'refresh-grant-servers.mjs'), [name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${name} bench server exited with ${code}`)));
    child.once('message', ({ port }) => resolve({
      port,
      stop: () => new Promise((r) => { child.removeAllListeners('exit'); child.once('exit', r); child.send('stop'); }),
    }));
  });
}

/** A refresh token from the server's own password grant (access_type=offline), as `docker login` gets one. */
async function refreshTokenFrom(port) {
  const body = new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'x', service: SERVICE, client_id: 'docker', access_type: 'offline' });
  const res = await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST', headers: HEADERS, body });
  const json = await res.json();
  if (res.status !== 200 || !json.refresh_token) throw new Error(`password grant on ${port} answered ${res.status} ${JSON.stringify(json)}`);
  return json.refresh_token;
}

function load(port, form, seconds) {
  return new Promise((resolve, reject) => {
    autocannon({ url: `http://127.0.0.1:${port}/token`, method: 'POST', headers: HEADERS, body: form, connections: CONNECTIONS, duration: seconds }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        return reject(new Error(`port ${port}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
      }
      resolve(result);
    });
  });
}

const servers = { memory: await startServer('memory'), redis: await startServer('redis') };
const runs = { memory: [], redis: [] };
try {
  const forms = {};
  for (const name of ['memory', 'redis']) {
    // What docker push/pull sends with the identitytoken from ~/.docker/config.json.
    forms[name] = new URLSearchParams({
      client_id: 'docker', grant_type: 'refresh_token', refresh_token: await refreshTokenFrom(servers[name].port),
      scope: 'repository:alice/bb:pull', service: SERVICE,
    }).toString();
    await load(servers[name].port, forms[name], WARMUP);
  }
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? ['memory', 'redis'] : ['redis', 'memory'];
    for (const name of order) {
      const result = await load(servers[name].port, forms[name], DURATION);
      runs[name].push(result);
      console.log(`round ${round + 1} ${name.padEnd(6)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms`);
    }
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}
const mean = (list) => list.reduce((sum, r) => sum + r.requests.average, 0) / list.length;
const memory = mean(runs.memory);
const redis = mean(runs.redis);
console.log('');
console.log(`refresh_token grant, ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s per store after ${WARMUP} s warm-up`);
console.log(`  MemoryRefreshTokenStore (baseline)   ${memory.toFixed(0)} tokens/s`);
console.log(`  RedisRefreshTokenStore               ${redis.toFixed(0)} tokens/s`);
console.log(`  ratio redis / memory                 ${(redis / memory).toFixed(3)}`);
