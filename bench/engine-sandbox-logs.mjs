// Bench (c): `docker logs -f` of 1 GiB through the sandbox runtime (bubblewrap) against the same
// command's output read straight from a pipe, measured in the same run, in both orders:
//  - attached before start (the follower is there from the first byte; target >= 0.8x the pipe);
//  - started after the container is running and has written half of it to its log files, which
//    is what people type (the follower reads the files, then the live output; target >= 0.5x).
// Prints the bytes delivered (every byte: payload + 8-byte frame headers), the throughput ratio
// and the server's peak RSS growth (target < 64 MiB). The container's LogConfig keeps the whole
// output (one file of max-size larger than it), so every byte can be checked in both orders.
// Plain ESM on dist/: `npm run bench:engine`. Skips when bwrap is missing.
import express from 'express';
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineRouter, listenEngine } from '../dist/engine/index.js';
import { sandboxRuntime } from '../dist/engine/runtime/sandbox/index.js';

const TOTAL = Number(process.env.BENCH_LOG_BYTES ?? 1024 ** 3);
if (spawnSync('bwrap', ['--version']).status !== 0) {
  console.log('sandbox log streaming: skipped (bwrap missing: apt-get install bubblewrap)');
  process.exit(0);
}
const cmd = ['head', '-c', String(TOTAL), '/dev/zero'];

async function pipe() {
  const t0 = performance.now();
  const child = spawn('/bin/busybox', cmd.slice(1), { argv0: 'head', stdio: ['ignore', 'pipe', 'inherit'] });
  let bytes = 0;
  for await (const c of child.stdout) bytes += c.length;
  return { bytes, ms: performance.now() - t0 };
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

async function sandboxed(order) {
  const runtime = sandboxRuntime();
  const app = express();
  app.use(engineRouter(runtime));
  const socket = join(mkdtempSync(join(tmpdir(), 'dockgate-bench-')), 'engine.sock');
  const server = await listenEngine(app, { socket });
  const { Id } = await json(await http(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: cmd, HostConfig: { LogConfig: logConfig } }));
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  let res;
  let t0;
  if (order === 'before') {
    res = await http(socket, 'GET', `/v1.28/containers/${Id}/logs?stdout=1&stderr=1&follow=1`);
    t0 = performance.now();
    (await http(socket, 'POST', `/v1.28/containers/${Id}/start`)).resume();
  } else {
    (await http(socket, 'POST', `/v1.28/containers/${Id}/start`)).resume();
    const { LogPath } = await json(await http(socket, 'GET', `/v1.28/containers/${Id}/json`));
    const size = () => { try { return statSync(LogPath).size; } catch { return 0; } };
    const giveUp = Date.now() + 120_000;
    while (size() < TOTAL / 2 && Date.now() < giveUp) await new Promise((r) => setTimeout(r, 5));
    t0 = performance.now();
    res = await http(socket, 'GET', `/v1.28/containers/${Id}/logs?stdout=1&stderr=1&follow=1`);
  }
  // Walk the 8-byte stream headers so "every byte delivered" counts payload, not framing.
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
  const ms = performance.now() - t0;
  clearInterval(timer);
  (await http(socket, 'DELETE', `/v1.28/containers/${Id}?force=1`)).resume();
  await server.close();
  await runtime.close?.();
  return { bytes, payload, ms, growth: Math.max(peak, process.memoryUsage().rss) - rss0 };
}

const mb = (b) => b / 1024 / 1024;
console.log(`sandbox log streaming: ${mb(TOTAL).toFixed(0)} MiB from busybox head -c, LogConfig ${JSON.stringify(logConfig.Config)}`);
const base = await pipe();
const rate = (bytes, ms) => `${(bytes / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;
console.log(`baseline: same command, pipe read                 ${mb(base.bytes).toFixed(0)} MiB in ${(base.ms / 1000).toFixed(2)} s (${rate(base.bytes, base.ms)})`);
const orders = [
  ['before', 'logs -f attached before start', 0.8],
  ['after', 'logs -f started after start (half on disk)', 0.5],
];
for (const [order, label, target] of orders) {
  const s = await sandboxed(order);
  console.log(`sandbox, ${label}: ${mb(s.bytes).toFixed(0)} MiB in ${(s.ms / 1000).toFixed(2)} s (${rate(TOTAL, s.ms)}; payload ${s.payload} of ${TOTAL} bytes: ${s.payload === TOTAL ? 'every byte delivered' : 'INCOMPLETE'})`);
  console.log(`  order measured: ${order} start; ratio sandbox/pipe ${((TOTAL / s.ms) / (base.bytes / base.ms)).toFixed(2)} (target >= ${target}); server peak RSS growth ${mb(s.growth).toFixed(0)} MiB (target < 64)`);
}
