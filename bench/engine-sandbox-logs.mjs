// Bench (c): `docker logs -f` of 1 GiB through the sandbox runtime (bubblewrap) against the same
// command's output read straight from a pipe. Prints the throughput ratio (target >= 0.5), the
// bytes delivered (every byte: payload + 8-byte frame headers) and the server's peak RSS growth
// (target < 64 MiB). Plain ESM on dist/: `npm run bench:engine`. Skips when bwrap is missing.
import express from 'express';
import { spawn, spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
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

async function sandboxed() {
  const runtime = sandboxRuntime();
  const app = express();
  app.use(engineRouter(runtime));
  const socket = join(mkdtempSync(join(tmpdir(), 'dockgate-bench-')), 'engine.sock');
  const server = await listenEngine(app, { socket });
  let text = '';
  for await (const c of await http(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', Cmd: cmd })) text += c;
  const { Id } = JSON.parse(text);
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const res = await http(socket, 'GET', `/v1.28/containers/${Id}/logs?stdout=1&stderr=1&follow=1`);
  const t0 = performance.now();
  (await http(socket, 'POST', `/v1.28/containers/${Id}/start`)).resume();
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
console.log(`sandbox log streaming: ${mb(TOTAL).toFixed(0)} MiB from busybox head -c`);
const base = await pipe();
console.log(`baseline: same command, pipe read   ${mb(base.bytes).toFixed(0)} MiB in ${(base.ms / 1000).toFixed(2)} s`);
const s = await sandboxed();
console.log(`sandbox runtime, logs -f over socket ${mb(s.bytes).toFixed(0)} MiB in ${(s.ms / 1000).toFixed(2)} s (payload ${s.payload} of ${TOTAL} bytes: ${s.payload === TOTAL ? 'every byte delivered' : 'INCOMPLETE'})`);
console.log(`ratio sandbox/pipe throughput: ${((TOTAL / s.ms) / (base.bytes / base.ms)).toFixed(2)} (target >= 0.5); server peak RSS growth ${mb(s.growth).toFixed(0)} MiB (target < 64)`);
