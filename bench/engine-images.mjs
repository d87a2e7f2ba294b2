// Bench: `docker save` / `docker load` tarballs through engineRouter + dockerRuntime against the
// same requests straight to dockerd, with the server's peak RSS growth: a tarball must be
// streamed both ways, never held in memory. Plain ESM on the built dist/: `npm run bench:images`.
// Needs dockerd and busybox:local; builds a BENCH_IMAGE_MB (default 256) image and removes it after.
import express from 'express';
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { engineRouter, listenEngine } from '../dist/engine/index.js';
import { dockerRuntime } from '../dist/engine/runtime/docker/index.js';

const MB = Number(process.env.BENCH_IMAGE_MB ?? 256);
const IMAGE = `dockgate-bench-big:${MB}`;
const DOCKERD = '/var/run/docker.sock';
const dir = mkdtempSync(join(tmpdir(), 'dockgate-bench-images-'));
const docker = (...args) => execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

function rssSampler() {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  return () => {
    clearInterval(timer);
    return (Math.max(peak, process.memoryUsage().rss) - base) / 1024 ** 2;
  };
}

function send(socket, method, path, body) {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, method, path, headers: body ? { 'Content-Type': 'application/x-tar', 'Transfer-Encoding': 'chunked' } : {} }, resolve);
    req.on('error', reject);
    if (body) body.pipe(req);
    else req.end();
  });
}

async function save(socket, file) {
  const t0 = performance.now();
  const res = await send(socket, 'GET', `/v1.41/images/${IMAGE}/get`);
  if (res.statusCode !== 200) throw new Error(`save answered ${res.statusCode}`);
  await pipeline(res, createWriteStream(file));
  return { ms: performance.now() - t0, bytes: statSync(file).size };
}

async function load(socket, file) {
  const t0 = performance.now();
  const res = await send(socket, 'POST', '/v1.41/images/load?quiet=1', createReadStream(file));
  let text = '';
  for await (const c of res) text += c;
  if (res.statusCode !== 200 || !text.includes('Loaded image')) throw new Error(`load answered ${res.statusCode}: ${text}`);
  return { ms: performance.now() - t0 };
}

try {
  docker('run', '--name', 'dockgate-bench-mk', '--network', 'none', 'busybox:local', 'sh', '-c', `head -c ${MB * 1024 * 1024} /dev/urandom > /big`);
  docker('commit', 'dockgate-bench-mk', IMAGE);
  docker('rm', 'dockgate-bench-mk');

  const runtime = dockerRuntime({ socketPath: DOCKERD });
  const app = express();
  app.use(engineRouter(runtime, '1.12-1.41'));
  const socket = join(dir, 'engine.sock');
  const engine = await listenEngine(app, { socket });

  const directSave = await save(DOCKERD, join(dir, 'direct.tar'));
  let peak = rssSampler();
  const gateSave = await save(socket, join(dir, 'gate.tar'));
  const saveRss = peak();
  const directLoad = await load(DOCKERD, join(dir, 'direct.tar'));
  peak = rssSampler();
  const gateLoad = await load(socket, join(dir, 'gate.tar'));
  const loadRss = peak();

  const mbps = (bytes, ms) => (bytes / 1024 ** 2 / (ms / 1000)).toFixed(0);
  console.log(`image ${IMAGE}: tarball ${(directSave.bytes / 1024 ** 2).toFixed(0)} MiB (same through dockgate: ${gateSave.bytes === directSave.bytes})`);
  console.log(`save  direct ${mbps(directSave.bytes, directSave.ms)} MiB/s, through dockgate ${mbps(gateSave.bytes, gateSave.ms)} MiB/s, ratio ${(directSave.ms / gateSave.ms).toFixed(2)}, server RSS growth ${saveRss.toFixed(1)} MiB`);
  console.log(`load  direct ${mbps(directSave.bytes, directLoad.ms)} MiB/s, through dockgate ${mbps(directSave.bytes, gateLoad.ms)} MiB/s, ratio ${(directLoad.ms / gateLoad.ms).toFixed(2)}, server RSS growth ${loadRss.toFixed(1)} MiB`);
  await engine.close();
  await runtime.close();
} finally {
  try { docker('rm', '-f', 'dockgate-bench-mk'); } catch { /* already removed */ }
  try { docker('rmi', IMAGE); } catch { /* never built */ }
  rmSync(dir, { recursive: true, force: true });
}
