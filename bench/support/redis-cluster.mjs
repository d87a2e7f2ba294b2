// A throwaway Redis Cluster for bench:refresh: 3 masters with one replica each, as deployed,
// on ports 7150-7155 (cluster bus 27150-27155), data under a mkdtemp directory removed on stop.
// BENCH_REDIS_CLUSTER=host:port,… points the bench at an existing cluster instead.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PORTS = [7150, 7151, 7152, 7153, 7154, 7155];

const cli = async (port, ...args) => {
  try {
    return (await run('redis-cli', ['-p', String(port), ...args], { timeout: 5000 })).stdout.trim();
  } catch {
    return '';
  }
};

async function until(check, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** Resolves to { nodes: ['127.0.0.1:7150', …], stop() }. */
export async function startBenchCluster() {
  if (process.env.BENCH_REDIS_CLUSTER) return { nodes: process.env.BENCH_REDIS_CLUSTER.split(','), stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-bench-cluster-'));
  const children = PORTS.map((port) => spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--logfile', join(dir, `${port}.log`),
    '--cluster-enabled', 'yes', '--cluster-port', String(port + 20000), '--cluster-config-file', join(dir, `nodes-${port}.conf`),
  ], { stdio: 'ignore' }));
  const stop = async () => {
    await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGKILL'); }))));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of PORTS) if (!(await until(async () => (await cli(port, 'PING')) === 'PONG', 10_000))) throw new Error(`redis-server ${port} did not start`);
    await run('redis-cli', ['--cluster', 'create', ...PORTS.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 30_000 });
    const ok = await until(async () => {
      for (const port of PORTS) if (!(await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
      return true;
    }, 20_000);
    if (!ok) throw new Error('the bench cluster did not become ok');
  } catch (err) {
    await stop();
    throw err;
  }
  return { nodes: PORTS.map((p) => `127.0.0.1:${p}`), stop };
}
