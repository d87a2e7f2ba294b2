// Tokens per second of the password grant through tokenRouter, against a baseline measured in the
// same run: a bare Express route that parses the same form and signs the same JWT with the same
// key. Load comes from autocannon over 127.0.0.1, bounded in time; each contender is measured
// twice, in alternating order, and the ratio of the means is printed.
//
//   npm run bench:token                         (builds dist/ first)
//   node bench/token-grant.mjs --profile        (also writes CPU profiles and says where time goes)
//   BENCH_WARMUP=5 BENCH_DURATION=10 BENCH_ROUNDS=2 BENCH_CONNECTIONS=10 (seconds / counts)
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { summarizeCpuProfile } from './cpuprofile-summary.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const env = (name, fallback) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${name} must be a positive number`);
  return value;
};
const WARMUP = env('BENCH_WARMUP', 5);
const DURATION = env('BENCH_DURATION', 10);
const ROUNDS = env('BENCH_ROUNDS', 2);
const CONNECTIONS = env('BENCH_CONNECTIONS', 10);
const TARGET_RATIO = 0.9;

// What containerd sends for `ctr images pull --user alice:… 127.0.0.1:PORT/alice/bb:1`.
const FORM = new URLSearchParams({
  client_id: 'containerd-client',
  grant_type: 'password',
  password: 'bench password',
  scope: 'repository:alice/bb:pull',
  service: 'registry.bench',
  username: 'alice',
}).toString();
const HEADERS = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };

function startServers(names, execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'token-grant-servers.mjs'), names, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench servers exited with ${code}`)));
    child.once('message', ({ ports }) => resolve({
      ports,
      stop: () => new Promise((r) => { child.removeAllListeners('exit'); child.once('exit', r); child.send('stop'); }),
    }));
  });
}

async function fetchToken(port) {
  const res = await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST', headers: HEADERS, body: FORM });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`token endpoint on ${port} answered ${res.status} ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Both contenders must issue the same kind of token, or the comparison means nothing. */
async function checkSameTokens(ports) {
  const [ours, base] = [await fetchToken(ports.tokenRouter), await fetchToken(ports.baseline)];
  const shape = (jwt) => ({
    header: Object.keys(decodeProtectedHeader(jwt)).sort(),
    claims: Object.keys(decodeJwt(jwt)).sort(),
    access: decodeJwt(jwt).access,
  });
  const [a, b] = [shape(ours), shape(base)];
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`tokens differ: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
  console.log(`same token shape: header ${a.header.join(',')}; claims ${a.claims.join(',')}; ${ours.length} vs ${base.length} bytes`);
}

function load(port, seconds) {
  return new Promise((resolve, reject) => {
    autocannon({
      url: `http://127.0.0.1:${port}/token`, method: 'POST', headers: HEADERS, body: FORM,
      connections: CONNECTIONS, duration: seconds,
    }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        return reject(new Error(`port ${port}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
      }
      resolve(result);
    });
  });
}

async function compare() {
  const servers = await startServers(['tokenRouter', 'baseline']);
  const runs = { tokenRouter: [], baseline: [] };
  try {
    await checkSameTokens(servers.ports);
    for (const name of ['tokenRouter', 'baseline']) await load(servers.ports[name], WARMUP);
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? ['tokenRouter', 'baseline'] : ['baseline', 'tokenRouter'];
      for (const name of order) {
        const result = await load(servers.ports[name], DURATION);
        runs[name].push(result);
        console.log(`round ${round + 1} ${name.padEnd(11)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms`);
      }
    }
  } finally {
    await servers.stop();
  }
  const mean = (list) => list.reduce((sum, r) => sum + r.requests.average, 0) / list.length;
  const ours = mean(runs.tokenRouter);
  const base = mean(runs.baseline);
  const ratio = ours / base;
  console.log('');
  console.log(`password grant, ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s each after ${WARMUP} s warm-up`);
  console.log(`  baseline (express.urlencoded + jose SignJWT)  ${base.toFixed(0)} tokens/s`);
  console.log(`  tokenRouter                                   ${ours.toFixed(0)} tokens/s`);
  console.log(`  ratio tokenRouter / baseline                  ${ratio.toFixed(3)}  (target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})`);
  return ratio;
}

async function profile(name) {
  const dir = mkdtempSync(join(tmpdir(), `dockgate-bench-${name}-`));
  const servers = await startServers([name], ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  try {
    await load(servers.ports[name], WARMUP + DURATION);
  } finally {
    await servers.stop();
  }
  const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile')));
  const summary = summarizeCpuProfile(file);
  console.log(`\nCPU profile of ${name} (${file}), ${summary.busyMs.toFixed(0)} ms busy:`);
  for (const [category, ms] of summary.categories.slice(0, 14)) {
    console.log(`  ${(ms / summary.busyMs * 100).toFixed(1).padStart(5)} %  ${category}`);
  }
  console.log('  busiest functions (self time):');
  for (const [fn, ms] of summary.functions.filter(([f]) => !f.startsWith('(idle)')).slice(0, 15)) {
    console.log(`  ${(ms / summary.busyMs * 100).toFixed(1).padStart(5)} %  ${fn}`);
  }
}

await compare();
if (process.argv.includes('--profile')) {
  await profile('tokenRouter');
  await profile('baseline');
}
