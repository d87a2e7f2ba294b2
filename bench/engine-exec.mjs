// Bench: `docker exec` through dockgate's Docker runtime against the same calls straight to
// dockerd, both over Unix sockets at API 1.41: (a) round trip of a tiny exec (create, attached
// start over the hijacked connection, inspect), (b) 64 MiB of exec output streamed back.
// Plain ESM on the built dist/: `npm run bench:exec`. Bounded: ROUNDS (default 20) pairs or 60 s.
import express from 'express';
import { existsSync, mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineRouter, listenEngine } from '../dist/engine/index.js';
import { dockerRuntime } from '../dist/engine/runtime/docker/index.js';

const DOCKERD = '/var/run/docker.sock';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const BIG = 64 * 1024 * 1024;
if (!existsSync(DOCKERD)) {
  console.log(`engine exec: skipped, no dockerd at ${DOCKERD}`);
  process.exit(0);
}
const runtime = dockerRuntime({ socketPath: DOCKERD });
const app = express();
app.use(engineRouter(runtime, '1.12-1.41'));
const socket = join(mkdtempSync(join(tmpdir(), 'dockgate-bench-')), 'engine.sock');
const server = await listenEngine(app, { socket });

function call(sock, method, path, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request({ socketPath: sock, method, path, headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {} }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Attached exec start over Upgrade: resolves with the bytes received after the 101. */
function start(sock, id) {
  const body = JSON.stringify({ Detach: false, Tty: false });
  return new Promise((resolve, reject) => {
    const conn = connect(sock);
    let head = Buffer.alloc(0);
    let bytes = 0;
    let inBody = false;
    conn.on('data', (c) => {
      if (inBody) return void (bytes += c.length);
      head = Buffer.concat([head, c]);
      const split = head.indexOf('\r\n\r\n');
      if (split !== -1) {
        inBody = true;
        bytes += head.length - split - 4;
      }
    });
    conn.on('end', () => resolve(bytes));
    conn.on('error', reject);
    conn.write(`POST /v1.41/exec/${id}/start HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  });
}

async function exec(sock, container, cmd) {
  const t0 = performance.now();
  const created = JSON.parse((await call(sock, 'POST', `/v1.41/containers/${container}/exec`, { Cmd: cmd, AttachStdout: true, AttachStderr: true })).body);
  const bytes = await start(sock, created.Id);
  const info = JSON.parse((await call(sock, 'GET', `/v1.41/exec/${created.Id}/json`)).body);
  if (info.ExitCode !== 0) throw new Error(`exec exited ${info.ExitCode}`);
  return { ms: performance.now() - t0, bytes };
}

const created = JSON.parse((await call(DOCKERD, 'POST', '/v1.41/containers/create', { Image: 'busybox:local', Cmd: ['sleep', '600'], HostConfig: { NetworkMode: 'none' } })).body);
await call(DOCKERD, 'POST', `/v1.41/containers/${created.Id}/start`);
const targets = { dockerd: DOCKERD, dockgate: socket };
const small = { dockerd: [], dockgate: [] };
const big = { dockerd: [], dockgate: [] };
const rss0 = process.memoryUsage().rss;
try {
  await exec(DOCKERD, created.Id, ['true']);
  await exec(socket, created.Id, ['true']);
  const started = Date.now();
  for (let i = 0; i < ROUNDS && Date.now() - started < 60_000; i++) {
    for (const k of ['dockerd', 'dockgate']) small[k].push((await exec(targets[k], created.Id, ['true'])).ms);
  }
  for (let i = 0; i < 3; i++) {
    for (const k of ['dockerd', 'dockgate']) {
      const r = await exec(targets[k], created.Id, ['sh', '-c', `yes | head -c ${BIG}`]);
      if (r.bytes < BIG) throw new Error(`${k}: got ${r.bytes} bytes`);
      big[k].push(r.ms);
    }
  }
} finally {
  await call(DOCKERD, 'DELETE', `/v1.41/containers/${created.Id}?force=1`);
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`engine exec (busybox:local, Docker runtime), ${small.dockerd.length} tiny rounds and 3 × 64 MiB each`);
console.log(`baseline: dockerd directly   exec true median ${median(small.dockerd).toFixed(1)} ms; 64 MiB median ${median(big.dockerd).toFixed(0)} ms`);
console.log(`dockgate (dockerRuntime)     exec true median ${median(small.dockgate).toFixed(1)} ms; 64 MiB median ${median(big.dockgate).toFixed(0)} ms`);
console.log(`ratio dockgate/dockerd: exec true ${(median(small.dockgate) / median(small.dockerd)).toFixed(3)}, 64 MiB ${(median(big.dockgate) / median(big.dockerd)).toFixed(3)}; server RSS +${((process.memoryUsage().rss - rss0) / 1048576).toFixed(1)} MiB`);
await runtime.close();
await server.close();
