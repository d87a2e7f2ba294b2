// Bench (c): `docker logs -f` of 1 GiB through the sandbox runtime (bubblewrap) against the same
// command's output read straight from a pipe, in both orders:
//  - attached before start (the follower is there from the first byte; target >= 0.8x the pipe);
//  - started after the container is running and has written half of it to its log files, which
//    is what people type (the follower reads the files, then the live output; target >= 0.5x);
//  - the same after start with line-shaped output, 64-byte lines (`yes … | head -c`), against
//    that command piped to `wc -c` (target >= 0.5x): what people log, and where a frame per line
//    (dockerd's json-file) costs the Docker CLI a write per line.
// Each measurement runs in a fresh process of its own (this script, forked with the case's name),
// and the engine in one more. The follower is what people type: the Docker CLI's `docker logs -f`
// (/usr/local/bin/docker, else `docker` on PATH), its stdout piped to `wc -c`, as the baseline's
// command is (`head … | wc -c`); without a Docker CLI, an HTTP client in this process reads and
// demultiplexes the stream instead (BENCH_LOGS_CLIENT=http forces it), and the output says which.
// (Measured in one process, the bench's own reader shared the server's event loop, and a case
// paid for the garbage of the one before it.) BENCH_ROUNDS rounds (3), the cases'
// order rotating each round; the medians are compared and the spread is printed.
// Prints the bytes delivered (every byte: payload + 8-byte frame headers), the throughput ratio
// and the server's peak RSS growth (target < 64 MiB). The container's LogConfig keeps the whole
// output (one file of max-size larger than it), so every byte can be checked in both orders.
// Plain ESM on dist/: `npm run bench:engine`. Skips when bwrap is missing.
import express from 'express';
import { fork, spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { existsSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineRouter, listenEngine } from '../dist/engine/index.js';
import { sandboxRuntime } from '../dist/engine/runtime/sandbox/index.js';

const TOTAL = Number(process.env.BENCH_LOG_BYTES ?? 1024 ** 3);
if (spawnSync('bwrap', ['--version']).status !== 0) {
  console.log('sandbox log streaming: skipped (bwrap missing: apt-get install bubblewrap)');
  process.exit(0);
}
const cmd = ['head', '-c', String(TOTAL), '/dev/zero'];
/** 63 characters and a newline, `yes`'d: 64-byte lines. */
const LINE = '0123456789'.repeat(7).slice(0, 63);
const lineCmd = ['sh', '-c', `yes ${LINE} | head -c ${TOTAL}`];
const commandOf = (shape) => (shape === 'lines' ? lineCmd : cmd);
const DOCKER = existsSync('/usr/local/bin/docker') ? '/usr/local/bin/docker' : 'docker';
const CLIENT = process.env.BENCH_LOGS_CLIENT ?? (spawnSync(DOCKER, ['--version']).status === 0 ? 'cli' : 'http');

/** The baseline: the command's output counted by `wc -c` from a pipe. */
async function pipe(shape) {
  const t0 = performance.now();
  const bytes = await countedBy(shape === 'lines' ? `/bin/busybox yes ${LINE} | /bin/busybox head -c ${TOTAL}` : `/bin/busybox ${cmd.join(' ')}`);
  return { bytes, ms: performance.now() - t0 };
}

/** Runs `command | wc -c` and resolves the count: the same cheap reader for the baseline and the CLI. */
function countedBy(command) {
  return new Promise((resolve, reject) => {
    const sh = spawn('/bin/sh', ['-c', `${command} | wc -c`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    sh.stdout.on('data', (c) => (out += c));
    sh.once('error', reject);
    sh.once('exit', () => resolve(Number(out.trim())));
  });
}

function http(socket, method, path, payload) {
  return new Promise((resolve, reject) => {
    const data = payload ? Buffer.from(JSON.stringify(payload)) : undefined;
    const req = request({ socketPath: socket, method, path, headers: data ? { 'Content-Type': 'application/json', 'Content-Length': data.length } : {} }, resolve);
    req.on('error', reject);
    req.end(data);
  });
}

const logConfig = { Type: 'json-file', Config: { 'max-size': `${Math.ceil(TOTAL / 1024 / 1024) + 64}m`, 'max-file': '1' } };

async function json(res) {
  let text = '';
  for await (const c of res) text += c;
  return JSON.parse(text);
}

/**
 * The engine in a process of its own (this script, forked as `server`): the sandbox runtime behind
 * engineRouter on a Unix socket, one container created. It reports the socket and the id, then
 * samples its RSS until told to stop, and reports the peak growth.
 */
async function serve(shape) {
  // The whole output is kept in one file: the per-container cap (1 GiB by default) is raised to fit it.
  const runtime = sandboxRuntime({ maxLogFilesBytes: 2 * TOTAL + 256 * 1024 * 1024 });
  const app = express();
  const socket = join(mkdtempSync(join(tmpdir(), 'dockgate-bench-')), 'engine.sock');
  // Tells the bench when a follower's request has arrived, so "before start" starts after it.
  app.use((req, _res, next) => {
    if (/\/logs$/.test(req.path)) process.send({ following: true });
    next();
  });
  app.use(engineRouter(runtime));
  const server = await listenEngine(app, { socket });
  const { Id } = await json(await http(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: commandOf(shape), HostConfig: { LogConfig: logConfig } }));
  const rss0 = process.memoryUsage.rss();
  let peak = rss0;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  process.send({ socket, Id });
  await new Promise((resolve) => process.once('message', resolve));
  clearInterval(timer);
  (await http(socket, 'DELETE', `/v1.28/containers/${Id}?force=1`)).resume();
  await server.close();
  await runtime.close?.();
  return { growth: Math.max(peak, process.memoryUsage.rss()) - rss0 };
}

/**
 * One `docker logs -f` from outside the engine's process, as the Docker CLI reads it: the engine
 * runs in a forked process, this one is the client (the pipe baseline likewise reads in a process
 * of its own).
 */
async function sandboxed(order, shape = 'zeros') {
  const child = fork(fileURLToPath(import.meta.url), ['server', shape], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const { socket, Id } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the engine process exited with ${code}`)));
  });
  const following = new Promise((resolve) => child.on('message', (m) => m.following && resolve()));
  let follower;
  let t0;
  if (order === 'before') {
    follower = follow(socket, Id);
    await following;
    t0 = performance.now();
    (await http(socket, 'POST', `/v1.28/containers/${Id}/start`)).resume();
  } else {
    (await http(socket, 'POST', `/v1.28/containers/${Id}/start`)).resume();
    const { LogPath } = await json(await http(socket, 'GET', `/v1.28/containers/${Id}/json`));
    const size = () => { try { return statSync(LogPath).size; } catch { return 0; } };
    const giveUp = Date.now() + 120_000;
    while (size() < TOTAL / 2 && Date.now() < giveUp) await new Promise((r) => setTimeout(r, 5));
    t0 = performance.now();
    follower = follow(socket, Id);
  }
  const { bytes, payload } = await follower;
  const ms = performance.now() - t0;
  const growth = await new Promise((resolve) => {
    child.once('message', (m) => resolve(m.growth));
    child.send('stop');
  });
  await exited;
  return { bytes, payload, ms, growth };
}

/** `docker logs -f` through the Docker CLI: its stdout (the payload, demultiplexed) counted by `wc -c`, as the baseline's. */
async function followWithCli(socket, Id) {
  const bytes = await countedBy(`${DOCKER} -H unix://${socket} logs -f ${Id}`);
  return { bytes, payload: bytes };
}

/** The same request from an HTTP client in this process, walking the 8-byte frame headers so "every byte delivered" counts payload. */
async function followWithHttp(socket, Id) {
  const res = await http(socket, 'GET', `/v1.28/containers/${Id}/logs?stdout=1&stderr=1&follow=1`);
  let bytes = 0, payload = 0, need = 0, header = Buffer.alloc(0);
  for await (const c of res) {
    bytes += c.length;
    let off = 0;
    while (off < c.length) {
      if (need > 0) {
        const take = Math.min(need, c.length - off);
        payload += take; need -= take; off += take;
      } else {
        const take = Math.min(8 - header.length, c.length - off);
        header = Buffer.concat([header, c.subarray(off, off + take)]); off += take;
        if (header.length === 8) { need = header.readUInt32BE(4); header = Buffer.alloc(0); }
      }
    }
  }
  return { bytes, payload };
}

const follow = CLIENT === 'cli' ? followWithCli : followWithHttp;

const mb = (b) => b / 1024 / 1024;
const CASES = {
  pipe: async () => ({ ...(await pipe()), growth: 0 }),
  before: () => sandboxed('before'),
  after: () => sandboxed('after'),
  'lines-pipe': async () => ({ ...(await pipe('lines')), growth: 0 }),
  'lines-after': () => sandboxed('after', 'lines'),
};

// A child: measure one case, report it, exit.
const only = process.argv[2];
if (only === 'server') {
  process.send(await serve(process.argv[3]));
  process.exit(0);
}
if (only) {
  process.send(await CASES[only]());
  process.exit(0);
}

function measure(name) {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [name], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let result;
    child.once('message', (m) => (result = m));
    child.once('error', reject);
    child.once('exit', (code) => (result ? resolve(result) : reject(new Error(`${name} exited with ${code}`))));
  });
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const rate = (bytes, ms) => bytes / 1e6 / (ms / 1000);
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`sandbox log streaming: ${mb(TOTAL).toFixed(0)} MiB from busybox head -c, LogConfig ${JSON.stringify(logConfig.Config)}, ${ROUNDS} rounds, each case in a fresh process`);
console.log(`follower: ${CLIENT === 'cli' ? `${DOCKER} logs -f (the Docker CLI), its stdout piped to wc -c` : 'an HTTP client in the bench (no Docker CLI found, or BENCH_LOGS_CLIENT=http)'}`);
const names = Object.keys(CASES);
const runs = Object.fromEntries(names.map((n) => [n, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const name of names.map((_, i) => names[(i + round) % names.length])) {
    const r = await measure(name);
    if (!name.endsWith('pipe') && r.payload !== TOTAL) throw new Error(`${name}: payload ${r.payload} of ${TOTAL} bytes: INCOMPLETE`);
    runs[name].push({ ...r, mbps: rate(TOTAL, r.ms) });
    console.log(`round ${round + 1} ${name.padEnd(11)} ${rate(TOTAL, r.ms).toFixed(0).padStart(5)} MB/s${name.endsWith('pipe') ? '' : `  every byte delivered (${mb(r.bytes).toFixed(0)} MiB${CLIENT === 'cli' ? '' : ' with frame headers'}), RSS growth ${mb(r.growth).toFixed(0)} MiB`}`);
  }
}
const spread = (list) => `${Math.min(...list).toFixed(0)}-${Math.max(...list).toFixed(0)}`;
for (const base of ['pipe', 'lines-pipe']) {
  const rates = runs[base].map((r) => r.mbps);
  console.log(`baseline: ${base === 'pipe' ? 'same command | wc -c        ' : '64-byte lines | wc -c       '}                median ${median(rates).toFixed(0)} MB/s (spread ${spread(rates)})`);
}
const orders = [
  ['before', 'logs -f attached before start', 0.8, 'pipe'],
  ['after', 'logs -f started after start (half on disk)', 0.5, 'pipe'],
  ['lines-after', 'logs -f of 64-byte lines, after start (half on disk)', 0.5, 'lines-pipe'],
];
for (const [order, label, target, base] of orders) {
  const pipeRates = runs[base].map((r) => r.mbps);
  const rates = runs[order].map((r) => r.mbps);
  const ratios = runs[order].map((r, i) => r.mbps / runs[base][i].mbps);
  const ratio = median(rates) / median(pipeRates);
  const growth = Math.max(...runs[order].map((r) => r.growth));
  console.log(`sandbox, ${label}: median ${median(rates).toFixed(0)} MB/s (spread ${spread(rates)})`);
  console.log(`  order measured: ${order} start; ratio sandbox/pipe ${ratio.toFixed(2)} (rounds ${ratios.map((x) => x.toFixed(2)).join(', ')}; target >= ${target}: ${ratio >= target ? 'met' : 'NOT met'}); server peak RSS growth ${mb(growth).toFixed(0)} MiB (target < 64)`);
}
