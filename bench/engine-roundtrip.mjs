// Bench (b): create -> start -> wait -> logs -> remove round trip through dockgate with the
// Docker runtime against the same calls straight to dockerd, both over Unix sockets at API 1.41.
// Plain ESM on the built dist/: `npm run bench:engine`. Bounded: ROUNDS (default 20) pairs or 60 s.
import express from 'express';
import { existsSync, mkdtempSync } from 'node:fs';
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
const runtime = dockerRuntime({ socketPath: DOCKERD });
const app = express();
app.use(engineRouter(runtime, '1.12-1.41'));
const socket = join(mkdtempSync(join(tmpdir(), 'dockgate-bench-')), 'engine.sock');
const server = await listenEngine(app, { socket });

const clients = {
  dockerd: new EngineClient({ socketPath: DOCKERD, version: '1.41', env: {} }),
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
await roundTrip(clients.dockerd, 'dockerd');
await roundTrip(clients.dockgate, 'dockgate');
const started = Date.now();
for (let i = 0; i < ROUNDS && Date.now() - started < 60_000; i++) {
  // Alternate so drift in dockerd's speed hits both sides alike.
  times.dockerd.push(await roundTrip(clients.dockerd, 'dockerd'));
  times.dockgate.push(await roundTrip(clients.dockgate, 'dockgate'));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`engine round trip create->start->wait->logs (busybox:local echo hi), ${times.dockerd.length} rounds each`);
for (const k of ['dockerd', 'dockgate']) console.log(`${k === 'dockerd' ? 'baseline: dockerd directly' : 'dockgate (dockerRuntime)'.padEnd(26)}  median ${median(times[k]).toFixed(1)} ms, mean ${mean(times[k]).toFixed(1)} ms`);
for (const k of ['dockerd', 'dockgate']) if (failed[k].length > 0) console.log(`  ${k}: ${failed[k].length} failed and made again: ${[...new Set(failed[k])].slice(0, 2).join(' | ')}`);
console.log(`ratio dockgate/dockerd: median ${(median(times.dockgate) / median(times.dockerd)).toFixed(3)}, mean ${(mean(times.dockgate) / mean(times.dockerd)).toFixed(3)}`);
clients.dockerd.close();
clients.dockgate.close();
await runtime.close();
await server.close();
