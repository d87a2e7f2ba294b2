// Bench: what an idmapped host bind (issue 33) adds to a start. `docker run --rm -v DIR:/mnt
// busybox true` through the sandbox runtime, alternating between a host folder of host root's
// (idmapped: the launcher runs the idmap helper on it) and one owned by the container's root (a
// plain bind, as before), and the same without a bind as a floor; medians of BENCH_RUNS (15) runs
// each, ratios against the plain bind measured in the same run. Plain ESM on the built dist/:
// `npm run build && node bench/engine-idmap-binds.mjs`.
import express from 'express';
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { engineRouter, listenEngine } from '../dist/engine/index.js';
import { sandboxRuntime } from '../dist/engine/runtime/sandbox/index.js';

const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const CLI = existsSync('/usr/local/bin/docker') ? '/usr/local/bin/docker' : 'docker';
if (process.getuid?.() !== 0) {
  console.log('engine idmap binds: skipped (needs root: the runtime user namespace)');
  process.exit(0);
}
// A range of its own, so the container root's host uid is known: 300000.
const RANGE = { uid: 300000, gid: 300000, size: 65536 };
const runtime = sandboxRuntime({ userns: RANGE });
const app = express();
app.use(engineRouter(runtime, '1.12-1.41'));
const dir = mkdtempSync(join(tmpdir(), 'dockgate-bench-idmap-'));
const server = await listenEngine(app, { socket: join(dir, 'engine.sock') });
const host = `unix://${join(dir, 'engine.sock')}`;
const rootOwned = mkdtempSync(join(tmpdir(), 'dockgate-bench-root-'));
const containerOwned = mkdtempSync(join(tmpdir(), 'dockgate-bench-ctr-'));
chownSync(containerOwned, RANGE.uid, RANGE.gid);

const docker = async (...args) => {
  const t = process.hrtime.bigint();
  await run(CLI, ['-H', host, ...args]);
  return Number(process.hrtime.bigint() - t) / 1e6;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
await docker('run', '--rm', '--network', 'none', 'busybox', 'true');
const times = { none: [], plain: [], idmapped: [] };
for (let i = 0; i < RUNS; i += 1) {
  times.none.push(await docker('run', '--rm', '--network', 'none', 'busybox', 'true'));
  times.plain.push(await docker('run', '--rm', '--network', 'none', '-v', `${containerOwned}:/mnt`, 'busybox', 'true'));
  times.idmapped.push(await docker('run', '--rm', '--network', 'none', '-v', `${rootOwned}:/mnt`, 'busybox', 'true'));
}
const base = median(times.plain);
for (const [name, xs] of Object.entries(times)) console.log(`${name.padEnd(9)} median ${median(xs).toFixed(1)} ms  ${(median(xs) / base).toFixed(2)}x the plain bind`);
server.close();
await runtime.close?.();
for (const d of [dir, rootOwned, containerOwned]) rmSync(d, { recursive: true, force: true });
process.exit(0);
