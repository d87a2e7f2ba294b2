// Bench (b): create -> start -> wait -> logs -> remove round trip through dockgate with the
// Docker runtime against the same calls straight to dockerd, both over Unix sockets at API 1.41.
// Plain ESM on the built dist/: `npm run bench:engine`. Bounded: ROUNDS (default 20) pairs or 60 s.
// Both sides reach dockerd through one counting proxy (a byte pipe that reads request lines), so
// the requests dockerd sees per round trip are printed for each side; the cost of the hop itself
// is measured on `GET /containers/ID/json`, alternated, and printed beside the ratio.
import express from 'express';
import { existsSync, mkdtempSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineRouter, listenEngine } from '../dist/engine/index.js';
import { dockerRuntime } from '../dist/engine/runtime/docker/index.js';
import { EngineClient } from '../dist/client/engine-client/index.js';

const DOCKERD = '/var/run/docker.sock';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
if (!existsSync(DOCKERD)) {
  console.log(`engine round trip: skipped, no dockerd at ${DOCKERD}`);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'dockgate-bench-'));
/** Request lines dockerd was sent since the last reset (both sides go through this proxy). */
let seen = [];
const proxySocket = join(dir, 'dockerd-proxy.sock');
const proxy = createServer((client) => {
  const upstream = createConnection(DOCKERD);
  client.on('data', (chunk) => {
    for (const m of chunk.toString('latin1').matchAll(/^(GET|HEAD|POST|PUT|DELETE) (\S+) HTTP\/1\.1\r$/gm)) seen.push(`${m[1]} ${m[2].replace(/[0-9a-f]{64}/g, 'ID').replace(/^\/v[\d.]+/, '')}`);
  });
  client.pipe(upstream).pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
await new Promise((resolve) => proxy.listen(proxySocket, resolve));
const runtime = dockerRuntime({ socketPath: proxySocket });
const app = express();
app.use(engineRouter(runtime, '1.12-1.41'));
const socket = join(dir, 'engine.sock');
const server = await listenEngine(app, { socket });

const clients = {
  dockerd: new EngineClient({ socketPath: proxySocket, version: '1.41', env: {} }),
  dockgate: new EngineClient({ socketPath: socket, version: '1.41', env: {} }),
};

const failed = { dockerd: [], dockgate: [] };

/**
 * One timed round trip; a failed one is counted and printed, not timed, and made again (dockerd
 * on a loaded machine now and then fails a start with "executable file not found").
 */
async function roundTrip(client, side) {
  for (;;) {
    try {
      return await roundTripOnce(client);
    } catch (error) {
      failed[side].push(String(error.message).split('\n')[0]);
      if (failed[side].length > 10) throw error;
    }
  }
}

async function roundTripOnce(client) {
  const t0 = performance.now();
  const { Id } = await client.createContainer({ Image: 'busybox:local', Cmd: ['echo', 'hi'], HostConfig: { NetworkMode: 'none' } });
  try {
    await client.start(Id);
    await client.wait(Id, 'not-running');
    const out = await client.logs(Id);
    if (out.stdout.toString() !== 'hi\n') throw new Error(`unexpected output ${JSON.stringify(out.stdout.toString())}`);
    return performance.now() - t0;
  } finally {
    await client.remove(Id, { force: true });
  }
}

const times = { dockerd: [], dockgate: [] };
const requests = {};
for (const side of ['dockerd', 'dockgate']) {
  await roundTrip(clients[side], side);
  seen = [];
  await roundTrip(clients[side], side);
  requests[side] = [...seen];
}
const started = Date.now();
for (let i = 0; i < ROUNDS && Date.now() - started < 60_000; i++) {
  // Alternate so drift in dockerd's speed hits both sides alike.
  times.dockerd.push(await roundTrip(clients.dockerd, 'dockerd'));
  times.dockgate.push(await roundTrip(clients.dockgate, 'dockgate'));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** The hop: one small request straight to dockerd and through dockgate, alternated. */
const agent = new Agent({ keepAlive: true });
const get = (socketPath, path) => new Promise((resolve, reject) => {
  request({ socketPath, path, agent }, (res) => res.resume().on('end', resolve)).on('error', reject).end();
});
const { Id: probe } = await clients.dockerd.createContainer({ Image: 'busybox:local', Cmd: ['true'], HostConfig: { NetworkMode: 'none' } });
const hop = { dockerd: [], dockgate: [] };
for (let i = 0; i < 200; i++) {
  for (const [side, path] of [['dockerd', proxySocket], ['dockgate', socket]]) {
    const t0 = performance.now();
    await get(path, `/v1.41/containers/${probe}/json`);
    hop[side].push(performance.now() - t0);
  }
}
await clients.dockerd.remove(probe, { force: true });
console.log(`engine round trip create->start->wait->logs (busybox:local echo hi), ${times.dockerd.length} rounds each`);
for (const k of ['dockerd', 'dockgate']) console.log(`${k === 'dockerd' ? 'baseline: dockerd directly' : 'dockgate (dockerRuntime)'.padEnd(26)}  median ${median(times[k]).toFixed(1)} ms, mean ${mean(times[k]).toFixed(1)} ms`);
for (const k of ['dockerd', 'dockgate']) if (failed[k].length > 0) console.log(`  ${k}: ${failed[k].length} failed and made again: ${[...new Set(failed[k])].slice(0, 2).join(' | ')}`);
console.log(`ratio dockgate/dockerd: median ${(median(times.dockgate) / median(times.dockerd)).toFixed(3)}, mean ${(mean(times.dockgate) / mean(times.dockerd)).toFixed(3)}, median of the rounds' ratios ${median(times.dockgate.map((t, i) => t / times.dockerd[i])).toFixed(3)}`);
for (const side of ['dockerd', 'dockgate']) console.log(`requests dockerd saw in one round trip, ${side === 'dockerd' ? 'direct' : 'through dockgate'}: ${requests[side].length} (${requests[side].join(', ')})`);
const added = median(hop.dockgate) - median(hop.dockerd);
console.log(`the hop: GET /containers/ID/json median ${median(hop.dockerd).toFixed(2)} ms direct, ${median(hop.dockgate).toFixed(2)} ms through dockgate (+${added.toFixed(2)} ms a request); `
  + `${requests.dockgate.length} requests at that cost would make the round trip ${((median(times.dockerd) + requests.dockgate.length * added) / median(times.dockerd)).toFixed(3)} of dockerd's`);
proxy.close();
agent.destroy();
clients.dockerd.close();
clients.dockgate.close();
await runtime.close();
await server.close();
