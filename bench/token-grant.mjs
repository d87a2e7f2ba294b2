// Tokens per second of the password grant through tokenRouter, against a baseline measured in the
// same run: a bare Express route that parses the same form and signs the same JWT with the same
// key. Load comes from autocannon over 127.0.0.1, bounded in time; each contender is measured
// BENCH_ROUNDS times, in alternating order, and the ratio of the means is printed, with the
// server's CPU time per token (steadier than req/s when other work shares the cores).
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
import { benchNumber } from './support/bench-number.mjs';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { summarizeCpuProfile } from './cpuprofile-summary.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const WARMUP = benchNumber('BENCH_WARMUP', 5);
const DURATION = benchNumber('BENCH_DURATION', 10);
const ROUNDS = benchNumber('BENCH_ROUNDS', 2);
const CONNECTIONS = benchNumber('BENCH_CONNECTIONS', 10);
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
      cpuMicros: () => new Promise((r) => { child.once('message', (m) => r(m.cpuMicros)); child.send('cpu'); }),
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
  // One process per contender: sharing one process biased the figures by which server was
  // created second (JIT and heap state), by up to 1.6×.
  const servers = {
    tokenRouter: await startServers(['tokenRouter']),
    baseline: await startServers(['baseline']),
  };
  const ports = { tokenRouter: servers.tokenRouter.ports.tokenRouter, baseline: servers.baseline.ports.baseline };
  const runs = { tokenRouter: [], baseline: [] };
  try {
    await checkSameTokens(ports);
    for (const name of ['tokenRouter', 'baseline']) await load(ports[name], WARMUP);
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? ['tokenRouter', 'baseline'] : ['baseline', 'tokenRouter'];
      for (const name of order) {
        const before = await servers[name].cpuMicros();
        const result = await load(ports[name], DURATION);
        result.cpuPerToken = (await servers[name].cpuMicros() - before) / result.requests.total;
        runs[name].push(result);
        console.log(`round ${round + 1} ${name.padEnd(11)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  ${result.cpuPerToken.toFixed(0)} CPU µs/token`);
      }
    }
  } finally {
    await Promise.all([servers.tokenRouter.stop(), servers.baseline.stop()]);
  }
  const mean = (list, of) => list.reduce((sum, r) => sum + of(r), 0) / list.length;
  const ours = mean(runs.tokenRouter, (r) => r.requests.average);
  const base = mean(runs.baseline, (r) => r.requests.average);
  const ratio = ours / base;
  const oursCpu = mean(runs.tokenRouter, (r) => r.cpuPerToken);
  const baseCpu = mean(runs.baseline, (r) => r.cpuPerToken);
  console.log('');
  console.log(`password grant, ${CONNECTIONS} connections, ${ROUNDS} × ${DURATION} s each after ${WARMUP} s warm-up`);
  console.log(`  baseline (express.urlencoded + jose SignJWT)  ${base.toFixed(0)} tokens/s`);
  console.log(`  tokenRouter                                   ${ours.toFixed(0)} tokens/s`);
  console.log(`  ratio tokenRouter / baseline                  ${ratio.toFixed(3)}  (target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})`);
  console.log(`  server CPU per token: baseline ${baseCpu.toFixed(0)} µs, tokenRouter ${oursCpu.toFixed(0)} µs; efficiency ratio ${(baseCpu / oursCpu).toFixed(3)} (steadier on a busy machine)`);
  return ratio;
}

async function profile(name) {
  const dir = mkdtempSync(join(tmpdir(), `dockgate-bench-${name}-`));
  const servers = await startServers([name], ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  let requests;
  try {
    requests = (await load(servers.ports[name], WARMUP + DURATION)).requests.total;
  } finally {
    await servers.stop();
  }
  const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile')));
  console.log(`profile of ${name}: ${file}`);
  return { requests, ...summarizeCpuProfile(file) };
}

/** CPU microseconds per token, by category, for both contenders side by side. */
function printProfiles(ours, base) {
  const perToken = (p, ms) => (ms * 1000) / p.requests;
  const lookup = (p) => new Map(p.categories);
  const [a, b] = [lookup(ours), lookup(base)];
  const names = [...new Set([...a.keys(), ...b.keys()])].filter((n) => n !== '(idle)')
    .sort((x, y) => perToken(ours, a.get(y) ?? 0) - perToken(ours, a.get(x) ?? 0));
  const cell = (v) => v.toFixed(1).padStart(9);
  console.log('\nCPU µs per token (self time; idle excluded)   tokenRouter   baseline      extra');
  for (const n of names) {
    const [x, y] = [perToken(ours, a.get(n) ?? 0), perToken(base, b.get(n) ?? 0)];
    if (x < 0.5 && y < 0.5) continue;
    console.log(`  ${n.padEnd(60).slice(0, 60)}${cell(x)}  ${cell(y)}  ${cell(x - y)}`);
  }
  const busy = (p) => perToken(p, p.busyMs);
  console.log(`  ${'total'.padEnd(60)}${cell(busy(ours))}  ${cell(busy(base))}  ${cell(busy(ours) - busy(base))}`);
  console.log('\ntokenRouter: busiest functions (self time, µs per token)');
  for (const [fn, ms] of ours.functions.filter(([f]) => !f.startsWith('(idle)')).slice(0, 15)) {
    console.log(`  ${cell(perToken(ours, ms))}  ${fn}`);
  }
}

await compare();
if (process.argv.includes('--profile')) {
  const ours = await profile('tokenRouter');
  const base = await profile('baseline');
  printProfiles(ours, base);
}
