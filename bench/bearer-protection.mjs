// Requests per second of a registry route behind requireBearer, against the same route
// unprotected, measured in the same run on 127.0.0.1:
//   (a) every request reuses one token (what a pull does: dozens of requests, one token);
//   (b) every request carries a token never seen before (pre-signed before measuring), so each
//       one costs a signature check.
// Each pair is measured ROUNDS times in alternating order; the ratio of the means is printed.
//
//   npm run bench:bearer                        (builds dist/ first)
//   BENCH_WARMUP=2 BENCH_DURATION=5 BENCH_ROUNDS=2 BENCH_CONNECTIONS=10 (seconds / counts)
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchNumber } from './support/bench-number.mjs';
import { generateSigningKey, loadSigningKey, signAccessToken } from '../dist/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const WARMUP = benchNumber('BENCH_WARMUP', 2);
const DURATION = benchNumber('BENCH_DURATION', 5);
const ROUNDS = benchNumber('BENCH_ROUNDS', 2);
const CONNECTIONS = benchNumber('BENCH_CONNECTIONS', 10);
const FRESH_TOKENS = benchNumber('BENCH_FRESH_TOKENS', 40000);
const TARGET_REUSED = 0.9;

function startServer(privateKeyPem) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'bearer-servers.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    child.once('message', ({ port }) => resolve({
      port,
      stop: () => new Promise((r) => { child.removeAllListeners('exit'); child.once('exit', r); child.send('stop'); }),
    }));
    child.send({ privateKeyPem });
  });
}

async function signTokens(key, count) {
  const grant = { issuer: 'bench', subject: 'alice', audience: 'registry.bench', access: [{ type: 'repository', name: 'alice/app', actions: ['pull'] }], ttl: 3600 };
  const list = [];
  for (let i = 0; i < count; i += 1) list.push((await signAccessToken(key, grant)).token);
  return list;
}

/** Every request takes the next token of the list, on both routes alike, so the load generator's cost is the same. */
function load(url, tokens, seconds) {
  let next = 0;
  const requests = [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` } }) }];
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: seconds, requests }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        return reject(new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
      }
      resolve(result);
    });
  });
}

async function pair(label, port, tokens) {
  const urls = { open: `http://127.0.0.1:${port}/open/v2/alice/app/tags/list`, protected: `http://127.0.0.1:${port}/v2/alice/app/tags/list` };
  const runs = { open: [], protected: [] };
  for (const name of ['open', 'protected']) await load(urls[name], tokens, WARMUP);
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? ['protected', 'open'] : ['open', 'protected'];
    for (const name of order) {
      const result = await load(urls[name], tokens, DURATION);
      runs[name].push(result.requests.average);
      console.log(`${label} round ${round + 1} ${name.padEnd(9)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms`);
    }
  }
  const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
  return { open: mean(runs.open), protected: mean(runs.protected) };
}

const { privateKeyPem } = generateSigningKey();
const key = loadSigningKey({ privateKey: privateKeyPem });
console.log(`pre-signing ${FRESH_TOKENS} ES256 tokens…`);
const fresh = await signTokens(key, FRESH_TOKENS);
const reused = fresh.slice(0, 1);
const server = await startServer(privateKeyPem);
let a;
let b;
try {
  const check = await fetch(`http://127.0.0.1:${server.port}/v2/alice/app/tags/list`, { headers: { authorization: `Bearer ${reused[0]}` } });
  if (check.status !== 200) throw new Error(`protected route answered ${check.status} to a valid token`);
  const unauth = await fetch(`http://127.0.0.1:${server.port}/v2/alice/app/tags/list`);
  if (unauth.status !== 401) throw new Error(`protected route answered ${unauth.status} without a token`);
  a = await pair('(a) reused token', server.port, reused);
  b = await pair('(b) fresh tokens', server.port, fresh.slice(1));
} finally {
  await server.stop();
}
const ratioA = a.protected / a.open;
const ratioB = b.protected / b.open;
console.log('');
console.log(`GET /v2/alice/app/tags/list, ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s per contender after ${WARMUP} s warm-up`);
console.log(`  (a) one reused token:   open ${a.open.toFixed(0)} req/s, protected ${a.protected.toFixed(0)} req/s, ratio ${ratioA.toFixed(3)} (target >= ${TARGET_REUSED}: ${ratioA >= TARGET_REUSED ? 'met' : 'NOT met'})`);
console.log(`  (b) a fresh token each: open ${b.open.toFixed(0)} req/s, protected ${b.protected.toFixed(0)} req/s, ratio ${ratioB.toFixed(3)}`);
