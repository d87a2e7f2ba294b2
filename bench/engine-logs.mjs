// Bench (a): log streaming throughput through engineRouter (HTTP over a Unix socket) against
// reading the process runtime's stream directly, with peak RSS, for 1 GiB of container output.
// Plain ESM on the built dist/ (Node 20 cannot run TypeScript): `npm run bench:engine`.
// Bounded: each run stops at 1 GiB or after 60 s, whichever comes first.
import express from 'express';
import { request } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineRouter, listenEngine } from '../dist/engine/index.js';
import { processRuntime } from '../dist/engine/runtime/process/index.js';
import { containerSpecOf } from '../dist/engine-api/container-spec.js';

const TOTAL = Number(process.env.BENCH_LOG_BYTES ?? 1024 ** 3);
const LIMIT_MS = 60_000;
const runtime = processRuntime({ images: { busybox: { program: '/bin/busybox' } } });
const body = { Image: 'busybox', Cmd: ['head', '-c', String(TOTAL), '/dev/zero'] };

function rssSampler() {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  return () => {
    clearInterval(timer);
    return Math.max(peak, process.memoryUsage().rss);
  };
}

async function direct() {
  const { id } = await runtime.create({ spec: containerSpecOf(body), body, apiVersion: '1.28' });
  const { stream } = await runtime.logs(id, { stdout: true, stderr: true, follow: true, timestamps: false });
  const stop = rssSampler();
  const t0 = performance.now();
  await runtime.start(id);
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += chunk.length;
    if (performance.now() - t0 > LIMIT_MS) { stream.destroy(); break; }
  }
  const ms = performance.now() - t0;
  await runtime.remove(id, { force: true, volumes: false });
  return { bytes, ms, rss: stop() };
}

function http(socket, method, path, payload) {
  return new Promise((resolve, reject) => {
    const data = payload ? Buffer.from(JSON.stringify(payload)) : undefined;
    const req = request({ socketPath: socket, method, path, headers: data ? { 'Content-Type': 'application/json', 'Content-Length': data.length } : {} }, resolve);
    req.on('error', reject);
    req.end(data);
  });
}

async function readJson(res) {
  let text = '';
  for await (const c of res) text += c;
  return text ? JSON.parse(text) : undefined;
}

async function throughRouter() {
  const app = express();
  app.use(engineRouter(runtime));
  const socket = join(mkdtempSync(join(tmpdir(), 'dockgate-bench-')), 'engine.sock');
  const server = await listenEngine(app, { socket });
  const { Id } = await readJson(await http(socket, 'POST', '/v1.28/containers/create', body));
  const res = await http(socket, 'GET', `/v1.28/containers/${Id}/logs?stdout=1&stderr=1&follow=1`);
  const stop = rssSampler();
  const t0 = performance.now();
  (await http(socket, 'POST', `/v1.28/containers/${Id}/start`)).resume();
  let bytes = 0;
  for await (const chunk of res) {
    bytes += chunk.length;
    if (performance.now() - t0 > LIMIT_MS) { res.destroy(); break; }
  }
  const ms = performance.now() - t0;
  (await http(socket, 'DELETE', `/v1.28/containers/${Id}?force=1`)).resume();
  await server.close();
  return { bytes, ms, rss: stop() };
}

const mb = (b) => b / 1024 / 1024;
const show = (label, r) => console.log(`${label.padEnd(34)} ${mb(r.bytes).toFixed(0).padStart(6)} MiB in ${(r.ms / 1000).toFixed(2)} s = ${(mb(r.bytes) / (r.ms / 1000)).toFixed(0).padStart(5)} MiB/s, peak RSS ${mb(r.rss).toFixed(0)} MiB`);

console.log(`engine log streaming: ${mb(TOTAL).toFixed(0)} MiB from busybox head -c (process runtime, 1 MiB log cap)`);
const base = await direct();
show('baseline: runtime stream directly', base);
const routed = await throughRouter();
show('engineRouter over a Unix socket', routed);
const rate = (r) => r.bytes / r.ms;
console.log(`ratio router/direct throughput: ${(rate(routed) / rate(base)).toFixed(2)}  (bytes include 8-byte frame headers)`);
await runtime.close();
