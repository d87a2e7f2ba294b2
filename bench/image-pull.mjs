// Bench: pulling a 128 MiB (incompressible) layer from a local registry 2.8 into dockgate's image
// store, against `docker pull` of the same image by dockerd from the same registry, with the
// store's peak RSS growth. Plain ESM on the built dist/: `npm run bench:pull`.
// Needs dockerd, docker-registry and the busybox:local image (see /work/shared/PEERS.md).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImageStore } from '../dist/engine/images/index.js';

const MIB = Number(process.env.BENCH_PULL_MIB ?? 128);
const docker = (...args) => execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const dir = mkdtempSync(join(tmpdir(), 'dockgate-bench-pull-'));
writeFileSync(join(dir, 'config.yml'), [
  'version: 0.1', 'log: { level: warn, accesslog: { disabled: true } }',
  `storage: { filesystem: { rootdirectory: ${JSON.stringify(join(dir, 'data'))} } }`,
  `http: { addr: "127.0.0.1:${port}" }`, '',
].join('\n'));
const registry = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: 'ignore' });
const host = `127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) {
  try { if ((await fetch(`http://${host}/v2/`)).ok) break; } catch { /* not up yet */ }
  await new Promise((r) => setTimeout(r, 100));
}
const image = `${host}/bench/big:1`;
const container = `dockgate-bench-pull-${process.pid}`;
try {
  docker('run', '--name', container, 'busybox:local', 'sh', '-c', `head -c ${MIB}m /dev/urandom > /big`);
  docker('commit', container, image);
  docker('rm', container);
  docker('push', image);
  docker('rmi', image);

  let t0 = performance.now();
  docker('pull', image);
  const dockerdMs = performance.now() - t0;
  docker('rmi', image);

  const store = await ImageStore.open(join(dir, 'store'));
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  t0 = performance.now();
  let failed;
  for await (const chunk of await store.pull({ ref: image })) if (String(chunk).includes('"error"')) failed = String(chunk);
  const storeMs = performance.now() - t0;
  clearInterval(sampler);
  if (failed) throw new Error(failed);
  const fmt = (ms) => `${(ms / 1000).toFixed(2)} s (${(MIB / (ms / 1000)).toFixed(0)} MiB/s)`;
  console.log(`pull of a ${MIB} MiB layer from registry 2.8 on ${host}`);
  console.log(`  dockerd (docker pull):       ${fmt(dockerdMs)}`);
  console.log(`  dockgate ImageStore.pull:    ${fmt(storeMs)}`);
  console.log(`  speed ratio (dockgate/dockerd): ${(dockerdMs / storeMs).toFixed(2)}`);
  console.log(`  store peak RSS growth: ${((peak - before) / 1024 ** 2).toFixed(1)} MiB`);
} finally {
  try { docker('rm', '-f', container); } catch { /* gone */ }
  try { docker('rmi', image); } catch { /* gone */ }
  registry.kill();
  rmSync(dir, { recursive: true, force: true });
}
