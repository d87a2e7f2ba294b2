// Tokens per second of the refresh_token grant with the Redis refresh-token store, on one Redis
// and on a Redis Cluster (3 masters, 3 replicas, started here), against the in-memory store
// measured in the same run (same router, key and request; only the store
// differs). The request is what `docker pull` sends holding an identity token. Load comes from
// autocannon over 127.0.0.1, bounded in time; each store is measured ROUNDS times in alternating
// order, and the ratio of the means is printed.
//
// Then the demo as shipped (node demo/dist/start.cjs --key/--cert/--users, logs at info, the
// sandbox runtime), with its memory store and with --redis, driven from outside (the autocannon
// CLI in its own process) with BENCH_DEMO_CONNECTIONS (32), in rounds alternating with the
// memory-store app above loaded the same way: the figure a user measures beside this one.
//
//   npm run bench:refresh                     (builds dist/ and the demo first; needs redis-server on 6379, and
//                                             redis-server/redis-cli for the cluster on 7150-7155)
//   BENCH_DEMO=0 (skip the demo rows)   BENCH_DEMO_CONNECTIONS=32
//   BENCH_REDIS_URL=redis://127.0.0.1:6380 BENCH_REDIS_CLUSTER=10.0.0.1:7000,… BENCH_WARMUP=3 BENCH_DURATION=8 BENCH_ROUNDS=2 BENCH_CONNECTIONS=10
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchNumber } from './support/bench-number.mjs';
import { startBenchCluster } from './support/redis-cluster.mjs';
import { outsideLoad } from './support/outside-load.mjs';
import { startShippedDemo } from './support/shipped-demo.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const WARMUP = benchNumber('BENCH_WARMUP', 3);
const DURATION = benchNumber('BENCH_DURATION', 8);
const ROUNDS = benchNumber('BENCH_ROUNDS', 2);
const CONNECTIONS = benchNumber('BENCH_CONNECTIONS', 10);
const DEMO_CONNECTIONS = benchNumber('BENCH_DEMO_CONNECTIONS', 32);
const WITH_DEMO = process.env.BENCH_DEMO !== '0';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const SERVICE = 'registry.bench';
const HEADERS = { 'content-type': 'application/x-www-form-urlencoded' };

function startServer(name) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'refresh-grant-servers.mjs'), [name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, BENCH_REDIS_CLUSTER: cluster.nodes.join(',') } });
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

const cluster = await startBenchCluster();
const NAMES = ['memory', 'redis', 'cluster'];
const servers = {};
const runs = { memory: [], redis: [], cluster: [] };
try {
  for (const name of NAMES) servers[name] = await startServer(name);
  const forms = {};
  for (const name of NAMES) {
    // What docker push/pull sends with the identitytoken from ~/.docker/config.json.
    forms[name] = new URLSearchParams({
      client_id: 'docker', grant_type: 'refresh_token', refresh_token: await refreshTokenFrom(servers[name].port),
      scope: 'repository:alice/bb:pull', service: SERVICE,
    }).toString();
    await load(servers[name].port, forms[name], WARMUP);
  }
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? NAMES : [...NAMES].reverse();
    for (const name of order) {
      const result = await load(servers[name].port, forms[name], DURATION);
      runs[name].push(result);
      console.log(`round ${round + 1} ${name.padEnd(7)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms`);
    }
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
  await cluster.stop();
}
/** The demo as shipped (memory store, then --redis) against the memory-store app, all from outside. */
async function demoRows() {
  const contenders = {};
  try {
    const app = await startServer('memory');
    contenders.app = app;
    contenders.app.form = new URLSearchParams({
      client_id: 'docker', grant_type: 'refresh_token', refresh_token: await refreshTokenFrom(app.port), scope: 'repository:alice/bb:pull', service: SERVICE,
    }).toString();
    for (const [name, args] of [['demo', []], ['demoRedis', ['--redis', REDIS_URL]]]) {
      const demo = await startShippedDemo({ args });
      contenders[name] = demo;
      const { refreshToken } = await demo.login();
      demo.form = new URLSearchParams({
        client_id: 'docker', grant_type: 'refresh_token', refresh_token: refreshToken, scope: 'repository:alice/hello:pull', service: 'registry.local',
      }).toString();
    }
    const names = Object.keys(contenders);
    const rounds = Object.fromEntries(names.map((n) => [n, []]));
    const hit = (name, seconds) => outsideLoad({
      url: `http://127.0.0.1:${contenders[name].port}/token`, method: 'POST', headers: HEADERS, body: contenders[name].form, connections: DEMO_CONNECTIONS, seconds,
    });
    for (const name of names) await hit(name, WARMUP);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const name of names.map((_, i) => names[(i + round) % names.length])) {
        const result = await hit(name, DURATION);
        rounds[name].push(result.requests.average);
        console.log(`demo round ${round + 1} ${name.padEnd(9)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms`);
      }
    }
    return rounds;
  } finally {
    await Promise.all(Object.values(contenders).map((c) => c.stop?.()));
  }
}

const demo = WITH_DEMO ? await demoRows() : undefined;
const mean = (list) => list.reduce((sum, r) => sum + r.requests.average, 0) / list.length;
const memory = mean(runs.memory);
const redis = mean(runs.redis);
const clustered = mean(runs.cluster);
console.log('');
console.log(`refresh_token grant, ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s per store after ${WARMUP} s warm-up`);
console.log(`  MemoryRefreshTokenStore (baseline)   ${memory.toFixed(0)} tokens/s`);
console.log(`  RedisRefreshTokenStore               ${redis.toFixed(0)} tokens/s`);
console.log(`  RedisRefreshTokenStore on a Cluster  ${clustered.toFixed(0)} tokens/s   (3 masters + 3 replicas)`);
console.log(`  ratio redis / memory                 ${(redis / memory).toFixed(3)}`);
console.log(`  ratio cluster / memory               ${(clustered / memory).toFixed(3)}   (target ≥ 0.7)`);
if (demo) {
  const avg = (list) => list.reduce((a, b) => a + b, 0) / list.length;
  const each = (a, b) => a.map((x, i) => (x / b[i]).toFixed(2)).join(', ');
  console.log(`\nrefresh_token grant, demo as shipped (--key/--cert/--users, logs at info), ${DEMO_CONNECTIONS} connections from the autocannon CLI in its own process, ${ROUNDS} × ${DURATION} s rotating`);
  console.log(`  memory-store app (as above)          ${avg(demo.app).toFixed(0)} tokens/s`);
  console.log(`  demo, memory store                   ${avg(demo.demo).toFixed(0)} tokens/s   ratio to the app ${(avg(demo.demo) / avg(demo.app)).toFixed(3)} (rounds ${each(demo.demo, demo.app)})`);
  console.log(`  demo --redis                         ${avg(demo.demoRedis).toFixed(0)} tokens/s   ratio to the demo's memory store ${(avg(demo.demoRedis) / avg(demo.demo)).toFixed(3)} (rounds ${each(demo.demoRedis, demo.demo)})`);
}
