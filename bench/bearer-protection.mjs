// Requests per second of registry routes behind requireBearer, against the same route without it,
// measured in the same run on 127.0.0.1 (each contender served by its own process):
//   (a) every request reuses one token (what a pull does: dozens of requests, one token):
//       protected vs open, in a bare app;
//   (d) the same in the demo app as mounted (request ids, /metrics, registry routes first, then
//       the token service and the engine) vs its open twin composed the same way;
//   (b) every request carries a token never seen before (pre-signed before measuring), so each
//       one costs an ES256 verification: protected vs a bare jose `jwtVerify` route;
//   (e) the demo as shipped: the process `npm run demo` starts (node demo/dist/start.cjs with
//       --key/--cert/--users, request logs at info on a drained stdout pipe, metrics on), its
//       token from a real login, reused, with BENCH_DEMO_CONNECTIONS (32) from outside (the
//       autocannon CLI in its own process, as issue 35 measured), vs the bare Express + jose
//       `jwtVerify` route with one reused token, and the bare app's open route (no check at all),
//       loaded the same way, in alternating rounds.
// Each pair is measured BENCH_ROUNDS times in alternating order; the MEDIAN of the rounds is compared.
//
//   npm run bench:bearer                        (builds dist/ first; the demo half needs `npm run build:demo`)
//   BENCH_WARMUP=2 BENCH_DURATION=5 BENCH_ROUNDS=3 BENCH_CONNECTIONS=10 BENCH_FRESH_TOKENS=40000 BENCH_PAIRS=a,b,d,e
//   BENCH_DEMO_CONNECTIONS=32
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchNumber } from './support/bench-number.mjs';
import { outsideLoad } from './support/outside-load.mjs';
import { idleShare, startShippedDemo } from './support/shipped-demo.mjs';
import { generateSigningKey, loadSigningKey, signAccessToken } from '../dist/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const WARMUP = benchNumber('BENCH_WARMUP', 2);
const DURATION = benchNumber('BENCH_DURATION', 5);
const ROUNDS = benchNumber('BENCH_ROUNDS', 3);
const CONNECTIONS = benchNumber('BENCH_CONNECTIONS', 10);
const FRESH_TOKENS = benchNumber('BENCH_FRESH_TOKENS', 40000);
const DEMO_CONNECTIONS = benchNumber('BENCH_DEMO_CONNECTIONS', 32);
const TARGET = 0.9;
const PAIRS = (process.env.BENCH_PAIRS ?? 'a,b,d,e').split(',');

function startServers(kind, keys) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'bearer-servers.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    child.once('message', ({ ports }) => resolve({
      ports,
      cpuMicros: () => new Promise((r) => { child.once('message', (m) => r(m.cpuMicros)); child.send('cpu'); }),
      stop: () => new Promise((r) => { child.removeAllListeners('exit'); child.once('exit', r); child.send('stop'); }),
    }));
    child.send({ kind, ...keys });
  });
}

async function signTokens(key, grant, count) {
  const list = [];
  for (let i = 0; i < count; i += 1) list.push((await signAccessToken(key, grant)).token);
  return list;
}

/** Every request takes the next token of the list, on both routes alike, so the load generator's cost is the same. */
function load(url, tokens, seconds, connections = CONNECTIONS, outside = false) {
  // From outside the client sends what it was given; one token each (the reused-token rows).
  if (outside) {
    if (tokens.length !== 1) throw new Error('outside load sends one reused token');
    return outsideLoad({ url, headers: { authorization: `Bearer ${tokens[0]}` }, connections, seconds });
  }
  let next = 0;
  const requests = [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } }) }];
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration: seconds, requests }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        return reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
      }
      resolve(result);
    });
  });
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * `contenders` maps names to [server, URL] or [server, URL, its own tokens]; returns the median
 * req/s and CPU µs per request of each.
 */
async function measure(label, contenders, tokens, connections = CONNECTIONS, outside = false) {
  const names = Object.keys(contenders);
  const urls = Object.fromEntries(names.map((n) => [n, contenders[n][1]]));
  const tokensOf = (name) => contenders[name][2] ?? tokens;
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  const cpu = Object.fromEntries(names.map((n) => [n, []]));
  const idle = Object.fromEntries(names.map((n) => [n, []]));
  for (const name of names) await load(urls[name], tokensOf(name), WARMUP, connections, outside);
  for (let round = 0; round < ROUNDS; round += 1) {
    // Rotate who goes first, so no contender always runs after the same one.
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      const before = await contenders[name][0].cpuMicros();
      const thread = contenders[name][0].mainThread?.();
      const result = await load(urls[name], tokensOf(name), DURATION, connections, outside);
      const perRequest = (await contenders[name][0].cpuMicros() - before) / result.requests.total;
      const idleNow = thread ? idleShare(thread, contenders[name][0].mainThread()) : undefined;
      runs[name].push(result.requests.average);
      cpu[name].push(perRequest);
      if (idleNow !== undefined) idle[name].push(idleNow);
      console.log(`${label} round ${round + 1} ${name.padEnd(10)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  ${perRequest.toFixed(1)} CPU µs/request${idleNow !== undefined ? `  main thread idle ${(idleNow * 100).toFixed(0)}%` : ''}`);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(runs[n])]).concat(names.map((n) => [`${n}Cpu`, median(cpu[n])]))
    .concat(names.map((n) => [`${n}Rounds`, runs[n]]))
    .concat(names.filter((n) => idle[n].length > 0).map((n) => [`${n}Idle`, median(idle[n])])));
}

async function expectStatus(url, token, status) {
  const res = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  if (res.status !== status) throw new Error(`${url} answered ${res.status}, not ${status}`);
}

const { privateKeyPem, certificatePem } = generateSigningKey();
const key = loadSigningKey({ privateKey: privateKeyPem });
const demoKey = loadSigningKey({ privateKey: privateKeyPem, certificateChain: certificatePem });
const grant = { issuer: 'bench', subject: 'alice', audience: 'registry.bench', access: [{ type: 'repository', name: 'alice/app', actions: ['pull'] }], ttl: 3600 };
const demoGrant = { issuer: 'dockgate-demo', subject: 'alice', audience: 'registry.local', access: [{ type: 'repository', name: 'alice/hello', actions: ['pull'] }], ttl: 3600 };
console.log(`pre-signing ${FRESH_TOKENS} ES256 tokens…`);
const fresh = await signTokens(key, grant, FRESH_TOKENS);
const reused = fresh.slice(0, 1);
const demoToken = await signTokens(demoKey, demoGrant, 1);

const results = {};
// One server process per contender (the same app in each): two contenders sharing a process
// were biased by which one the JIT warmed first, by up to 1.6× (see bench:token).
const servers = [];
const start = async (kind, keys) => { const s = await startServers(kind, keys); servers.push(s); return s; };
try {
  if (PAIRS.includes('a') || PAIRS.includes('b')) {
    const url = async (path, first) => { const s = await start('routes', { privateKeyPem, first }); return [s, `http://127.0.0.1:${s.ports[0]}${path}`]; };
    const protectedRoute = await url('/v2/alice/app/tags/list', 'protected');
    await expectStatus(protectedRoute[1], reused[0], 200);
    await expectStatus(protectedRoute[1], undefined, 401);
    if (PAIRS.includes('a')) results.a = await measure('(a) reused token', { protected: protectedRoute, open: await url('/open/v2/alice/app/tags/list', 'open') }, reused);
    if (PAIRS.includes('b')) {
      const bare = await url('/bare/v2/alice/app/tags/list', 'bare');
      await expectStatus(bare[1], reused[0], 200);
      results.b = await measure('(b) fresh tokens', { protected: protectedRoute, jwtVerify: bare }, fresh.slice(1));
    }
  }
  if (PAIRS.includes('d')) {
    const path = '/v2/alice/hello/tags/list';
    const one = await start('demo', { privateKeyPem, certificatePem });
    const two = await start('demo', { privateKeyPem, certificatePem });
    const mounted = [one, `http://127.0.0.1:${one.ports[0]}${path}`];
    const open = [two, `http://127.0.0.1:${two.ports[1]}${path}`];
    await expectStatus(mounted[1], demoToken[0], 200);
    await expectStatus(mounted[1], undefined, 401);
    await expectStatus(open[1], undefined, 200);
    results.d = await measure('(d) demo app, reused token', { protected: mounted, open }, demoToken);
  }
  if (PAIRS.includes('e')) {
    const shipped = await startShippedDemo();
    servers.push(shipped);
    const { accessToken } = await shipped.login();
    const demoUrl = `${shipped.url}/v2/alice/hello/tags/list`;
    await expectStatus(demoUrl, accessToken, 200);
    await expectStatus(demoUrl, undefined, 401);
    const bare = await start('routes', { privateKeyPem, first: 'bare' });
    const openApp = await start('routes', { privateKeyPem, first: 'open' });
    const bareUrl = `http://127.0.0.1:${bare.ports[0]}/bare/v2/alice/app/tags/list`;
    await expectStatus(bareUrl, reused[0], 200);
    results.e = await measure('(e) demo as shipped, reused token', {
      demo: [shipped, demoUrl, [accessToken]],
      jwtVerify: [bare, bareUrl],
      open: [openApp, `http://127.0.0.1:${openApp.ports[0]}/open/v2/alice/app/tags/list`],
    }, reused, DEMO_CONNECTIONS, true);
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
}
const line = (label, r, aName, bName, target = TARGET) => {
  const ratio = r[aName] / r[bName];
  const verdict = target ? `target >= ${target}: ${ratio >= target ? 'met' : 'NOT met'}` : 'for reference, no target';
  console.log(`  ${label.padEnd(40)} ${bName} ${r[bName].toFixed(0).padStart(6)} req/s, ${aName} ${r[aName].toFixed(0).padStart(6)} req/s, ratio ${ratio.toFixed(3)} (${verdict}); by CPU per request ${(r[`${bName}Cpu`] / r[`${aName}Cpu`]).toFixed(3)} (${r[`${bName}Cpu`].toFixed(1)} vs ${r[`${aName}Cpu`].toFixed(1)} µs); rounds ${r[`${aName}Rounds`].map((x, i) => x / r[`${bName}Rounds`][i]).sort((x, y) => x - y).map((x) => x.toFixed(2)).join(', ')}`);
};
console.log('');
console.log(`GET …/tags/list, ${CONNECTIONS} connections, medians of ${ROUNDS} rounds × ${DURATION} s per contender after ${WARMUP} s warm-up`);
if (results.a) line('(a) one reused token, bare app', results.a, 'protected', 'open');
if (results.d) line('(d) one reused token, demo as mounted', results.d, 'protected', 'open');
if (results.b) line('(b) a fresh token each (ES256 verify)', results.b, 'protected', 'jwtVerify');
if (results.e) {
  console.log(`(e) demo as shipped (npm run demo --key/--cert/--users: logs at info to a drained pipe, metrics on), one reused token, ${DEMO_CONNECTIONS} connections from the autocannon CLI in its own process:`);
  line('    vs a bare Express + jose route', results.e, 'demo', 'jwtVerify', 0.95);
  line('    vs the bare app\'s open route (no check)', results.e, 'demo', 'open', 0);
  if (results.e.demoIdle !== undefined) console.log(`    the demo's main thread idle ${(results.e.demoIdle * 100).toFixed(0)}% of the run (run-queue time excluded: /proc schedstat)`);
}
console.log('(2-core machine shared with other work: figures are noisy; compare the ratios, each from the same run.)');
