// Tokens per second of the password and refresh_token grants through tokenRouter, against two
// contenders measured in the same run, each in its own process:
//   baseline     — a bare Express route that parses the same form and signs the same JWT with jose;
//   oauth2server — @node-oauth/oauth2-server 5 configured to sign the same JWT.
// Then the demo as shipped: the process `npm run demo` starts (node demo/dist/start.cjs with
// --key/--cert/--users, request logs at info on a drained stdout pipe, metrics on, htpasswd, the
// default ACL, the sandbox runtime on its socket), driven from outside — the autocannon CLI in a
// process of its own, as issue 35 measured it — with BENCH_DEMO_CONNECTIONS (32) for the refresh
// grant (its password grant is bcrypt on purpose), in rounds rotating with the baseline and the
// peer, loaded the same way at the same connection count.
// Load comes from autocannon over 127.0.0.1, bounded in time; each (grant, contender) is measured
// BENCH_ROUNDS times, the contenders' order rotating every round, and the MEDIAN of the rounds is
// compared, with the server's CPU time per token (steadier than req/s when other work shares the
// cores).
//
//   npm run bench:token                         (builds dist/ first)
//   node bench/token-grant.mjs --profile        (also writes CPU profiles, tokenRouter vs baseline, and says where time goes)
//   BENCH_WARMUP=3 BENCH_DURATION=6 BENCH_ROUNDS=3 BENCH_CONNECTIONS=10 (seconds / counts)
//   BENCH_GRANTS=password,refresh_token   BENCH_PROFILE_GRANT=password
//   BENCH_DEMO=0 (skip the demo rows)   BENCH_ROUTER=0 (only the demo rows)   BENCH_DEMO_CONNECTIONS=32
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { benchNumber } from './support/bench-number.mjs';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { summarizeCpuProfile } from './cpuprofile-summary.mjs';
import { outsideLoad } from './support/outside-load.mjs';
import { idleShare, startShippedDemo } from './support/shipped-demo.mjs';
import { generateSigningKey } from '../dist/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const WARMUP = benchNumber('BENCH_WARMUP', 3);
const DURATION = benchNumber('BENCH_DURATION', 6);
const ROUNDS = benchNumber('BENCH_ROUNDS', 3);
const CONNECTIONS = benchNumber('BENCH_CONNECTIONS', 10);
const DEMO_CONNECTIONS = benchNumber('BENCH_DEMO_CONNECTIONS', 32);
const WITH_DEMO = process.env.BENCH_DEMO !== '0';
const GRANTS = process.env.BENCH_ROUTER === '0' ? [] : (process.env.BENCH_GRANTS ?? 'password,refresh_token').split(',');
const TARGET_BASELINE = 0.9;
const TARGET_PEER = 1.0;
// Issue 35's goals for the demo as shipped, driven from outside.
const DEMO_TARGET_BASELINE = 1.0;
const DEMO_TARGET_PEER = 1.5;
const CONTENDERS = ['tokenRouter', 'baseline', 'oauth2server'];
const HEADERS = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };
const KEY = generateSigningKey({ commonName: 'bench signer' });

// What containerd sends for `ctr images pull --user alice:… 127.0.0.1:PORT/alice/bb:1`.
const PASSWORD_FORM = {
  client_id: 'containerd-client',
  grant_type: 'password',
  password: 'bench password',
  scope: 'repository:alice/bb:pull',
  service: 'registry.bench',
  username: 'alice',
};
// What `docker pull` sends holding the refresh token `docker login` stored.
const refreshForm = (refreshToken) => ({
  client_id: 'containerd-client',
  grant_type: 'refresh_token',
  refresh_token: refreshToken,
  scope: 'repository:alice/bb:pull',
  service: 'registry.bench',
});

function startServer(name, execArgv = []) {
  return new Promise((resolve, reject) => {
    const child = fork(join(here, 'token-grant-servers.mjs'), [name], {
      execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_KEY_PEM: KEY.privateKeyPem, BENCH_CERT_PEM: KEY.certificatePem },
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench server ${name} exited with ${code}`)));
    child.once('message', ({ port }) => resolve({
      port,
      cpuMicros: () => new Promise((r) => { child.once('message', (m) => r(m.cpuMicros)); child.send('cpu'); }),
      stop: () => new Promise((r) => { child.removeAllListeners('exit'); child.once('exit', r); child.send('stop'); }),
    }));
  });
}

async function post(port, form) {
  const res = await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST', headers: HEADERS, body: new URLSearchParams(form).toString() });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`token endpoint on ${port} answered ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** The form each grant sends to one server: the refresh grant needs that server's own refresh token. */
async function formFor(grant, server) {
  if (server.refreshForm) return server.refreshForm;
  const port = server.port;
  if (grant === 'password') return PASSWORD_FORM;
  const login = await post(port, { ...PASSWORD_FORM, access_type: 'offline' });
  if (!login.refresh_token) throw new Error(`no refresh token from ${port}`);
  return refreshForm(login.refresh_token);
}

/** Every contender must issue the same kind of token, or the comparison means nothing. */
async function checkSameTokens(grant, servers, forms) {
  const shape = (jwt) => JSON.stringify({
    header: Object.keys(decodeProtectedHeader(jwt)).sort(),
    claims: Object.keys(decodeJwt(jwt)).sort(),
    access: decodeJwt(jwt).access,
  });
  const tokens = {};
  for (const name of CONTENDERS) tokens[name] = (await post(servers[name].port, forms[name])).access_token;
  const ours = shape(tokens.tokenRouter);
  for (const name of CONTENDERS) if (shape(tokens[name]) !== ours) throw new Error(`${grant}: ${name}'s token differs: ${shape(tokens[name])} vs ${ours}`);
  console.log(`${grant}: same token shape from all three (${ours}); ${CONTENDERS.map((n) => `${n} ${tokens[n].length} bytes`).join(', ')}`);
}

function load(port, form, seconds, connections = CONNECTIONS, outside = false) {
  if (outside) return outsideLoad({ url: `http://127.0.0.1:${port}/token`, method: 'POST', headers: HEADERS, body: new URLSearchParams(form).toString(), connections, seconds });
  return new Promise((resolve, reject) => {
    autocannon({
      url: `http://127.0.0.1:${port}/token`, method: 'POST', headers: HEADERS, body: new URLSearchParams(form).toString(),
      connections, duration: seconds,
    }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        return reject(new Error(`port ${port}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
      }
      resolve(result);
    });
  });
}

/** The ratio of each round (a's rate over b's, same round), lowest to highest: the spread behind a median. */
const spread = (a, b) => `rounds ${a.rounds.map((x, i) => x / b.rounds[i]).sort((x, y) => x - y).map((r) => r.toFixed(2)).join(', ')}`;

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

async function compare(grant, servers, names = CONTENDERS, connections = CONNECTIONS, label = grant, outside = false) {
  const forms = {};
  for (const name of names) forms[name] = await formFor(grant, servers[name]);
  if (names === CONTENDERS) await checkSameTokens(grant, servers, forms);
  for (const name of names) await load(servers[name].port, forms[name], WARMUP, connections, outside);
  const runs = Object.fromEntries(names.map((n) => [n, { rps: [], cpu: [], idle: [] }]));
  for (let round = 0; round < ROUNDS; round += 1) {
    // Rotate who goes first, so no contender always runs after the same one.
    const order = names.map((_, i) => names[(i + round) % names.length]);
    for (const name of order) {
      const before = await servers[name].cpuMicros();
      const thread = servers[name].mainThread?.();
      const result = await load(servers[name].port, forms[name], DURATION, connections, outside);
      const cpu = (await servers[name].cpuMicros() - before) / result.requests.total;
      const idle = thread ? idleShare(thread, servers[name].mainThread()) : undefined;
      runs[name].rps.push(result.requests.average);
      runs[name].cpu.push(cpu);
      if (idle !== undefined) runs[name].idle.push(idle);
      console.log(`${label} round ${round + 1} ${name.padEnd(12)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  ${cpu.toFixed(0)} CPU µs/token${idle !== undefined ? `  main thread idle ${(idle * 100).toFixed(0)}%` : ''}`);
    }
  }
  return Object.fromEntries(names.map((n) => [n, { rps: median(runs[n].rps), cpu: median(runs[n].cpu), rounds: runs[n].rps, ...(runs[n].idle.length ? { idle: median(runs[n].idle) } : {}) }]));
}

/** The shipped demo's refresh grant answers like the others: an ES256 token for what alice asked. */
async function checkDemoToken(demo) {
  const body = await post(demo.port, demo.refreshForm);
  const claims = decodeJwt(body.access_token);
  if (decodeProtectedHeader(body.access_token).alg !== 'ES256' || claims.sub !== 'alice' || JSON.stringify(claims.access) !== '[{"type":"repository","name":"alice/hello","actions":["pull"]}]') {
    throw new Error(`the demo's refresh grant answered an unexpected token: ${JSON.stringify(claims)}`);
  }
  console.log(`refresh_token (demo as shipped): ES256 token for alice/hello pull, ${body.access_token.length} bytes`);
}

function reportDemo(r) {
  const met = (ratio, target) => `target >= ${target}: ${ratio >= target ? 'met' : 'NOT met'}`;
  const vsBase = r.demo.rps / r.baseline.rps;
  const vsPeer = r.demo.rps / r.oauth2server.rps;
  console.log(`\nrefresh_token grant, demo as shipped (--key/--cert/--users) — medians of ${ROUNDS} rounds × ${DURATION} s, ${DEMO_CONNECTIONS} connections from the autocannon CLI in its own process, after ${WARMUP} s warm-up, rotating with the two below`);
  console.log(`  baseline (express.urlencoded + jose SignJWT)   ${r.baseline.rps.toFixed(0).padStart(6)} tokens/s  ${r.baseline.cpu.toFixed(0)} CPU µs/token`);
  console.log(`  @node-oauth/oauth2-server (same JWT)           ${r.oauth2server.rps.toFixed(0).padStart(6)} tokens/s  ${r.oauth2server.cpu.toFixed(0)} CPU µs/token`);
  console.log(`  demo as shipped (npm run demo: logs at info,   ${r.demo.rps.toFixed(0).padStart(6)} tokens/s  ${r.demo.cpu.toFixed(0)} CPU µs/token`);
  console.log('    metrics on, htpasswd lookup, default ACL)');
  if (r.demo.idle !== undefined) console.log(`    its main thread idle ${(r.demo.idle * 100).toFixed(0)}% of the run (waiting on nothing to do, run-queue time excluded: /proc schedstat)`);
  console.log(`  ratio demo / baseline                          ${vsBase.toFixed(3)}  (${met(vsBase, DEMO_TARGET_BASELINE)}); by CPU per token ${(r.baseline.cpu / r.demo.cpu).toFixed(3)}; ${spread(r.demo, r.baseline)}`);
  console.log(`  ratio demo / oauth2-server                     ${vsPeer.toFixed(3)}  (${met(vsPeer, DEMO_TARGET_PEER)}); by CPU per token ${(r.oauth2server.cpu / r.demo.cpu).toFixed(3)}; ${spread(r.demo, r.oauth2server)}`);
}

function report(grant, r) {
  const met = (ratio, target) => `target >= ${target}: ${ratio >= target ? 'met' : 'NOT met'}`;
  const vsBase = r.tokenRouter.rps / r.baseline.rps;
  const vsPeer = r.tokenRouter.rps / r.oauth2server.rps;
  const peerVsBase = r.oauth2server.rps / r.baseline.rps;
  console.log(`\n${grant} grant — medians of ${ROUNDS} rounds × ${DURATION} s, ${CONNECTIONS} connections, after ${WARMUP} s warm-up`);
  console.log(`  baseline (express.urlencoded + jose SignJWT)   ${r.baseline.rps.toFixed(0).padStart(6)} tokens/s  ${r.baseline.cpu.toFixed(0)} CPU µs/token`);
  console.log(`  @node-oauth/oauth2-server (same JWT)           ${r.oauth2server.rps.toFixed(0).padStart(6)} tokens/s  ${r.oauth2server.cpu.toFixed(0)} CPU µs/token`);
  console.log(`  tokenRouter                                    ${r.tokenRouter.rps.toFixed(0).padStart(6)} tokens/s  ${r.tokenRouter.cpu.toFixed(0)} CPU µs/token`);
  console.log(`  ratio tokenRouter / baseline                   ${vsBase.toFixed(3)}  (${met(vsBase, TARGET_BASELINE)}); by CPU per token ${(r.baseline.cpu / r.tokenRouter.cpu).toFixed(3)}; ${spread(r.tokenRouter, r.baseline)}`);
  console.log(`  ratio tokenRouter / oauth2-server              ${vsPeer.toFixed(3)}  (${met(vsPeer, TARGET_PEER)}); by CPU per token ${(r.oauth2server.cpu / r.tokenRouter.cpu).toFixed(3)}; ${spread(r.tokenRouter, r.oauth2server)}`);
  console.log(`  ratio oauth2-server / baseline (the peer's)    ${peerVsBase.toFixed(3)}; by CPU per token ${(r.baseline.cpu / r.oauth2server.cpu).toFixed(3)}`);
}

async function profile(name, grant) {
  const dir = mkdtempSync(join(tmpdir(), `dockgate-bench-${name}-`));
  const server = await startServer(name, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  let requests;
  try {
    requests = (await load(server.port, await formFor(grant, server), WARMUP + DURATION)).requests.total;
  } finally {
    await server.stop();
  }
  const file = join(dir, readdirSync(dir).find((f) => f.endsWith('.cpuprofile')));
  console.log(`profile of ${name} (${grant} grant): ${file}`);
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

const servers = {};
const results = {};
let demoResult;
try {
  for (const name of CONTENDERS) servers[name] = await startServer(name);
  for (const grant of GRANTS) results[grant] = await compare(grant, servers);
  if (WITH_DEMO) {
    servers.demo = await startShippedDemo();
    const { refreshToken } = await servers.demo.login();
    servers.demo.refreshForm = { client_id: 'bench', grant_type: 'refresh_token', refresh_token: refreshToken, scope: 'repository:alice/hello:pull', service: 'registry.local' };
    await checkDemoToken(servers.demo);
    // Driven from outside (the autocannon CLI in its own process), the three alike.
    demoResult = await compare('refresh_token', servers, ['demo', 'baseline', 'oauth2server'], DEMO_CONNECTIONS, 'refresh_token (demo)', true);
  }
} finally {
  await Promise.all(Object.values(servers).map((s) => s.stop()));
}
for (const grant of GRANTS) report(grant, results[grant]);
if (demoResult) reportDemo(demoResult);
console.log('\n(2-core machine shared with other work: figures are noisy; compare the ratios, each from the same run.)');
if (process.argv.includes('--profile')) {
  const grant = process.env.BENCH_PROFILE_GRANT ?? 'password';
  const ours = await profile('tokenRouter', grant);
  const base = await profile('baseline', grant);
  printProfiles(ours, base);
}
