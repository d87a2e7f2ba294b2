/**
 * The demo as `npm run demo` starts it (`node demo/dist/start.cjs`, built by `npm test`'s
 * pretest) sizes the libuv threadpool, where it signs every token, to the machine: no more threads
 * than cores, up to libuv's default of 4, unless UV_THREADPOOL_SIZE says otherwise
 * (demo/start.cts; issue 35). The pool's threads are counted in /proc/PID/task: two demos that
 * differ only in their pool size differ by that many threads.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../support/until.js';

const START = join(process.cwd(), 'demo/dist/start.cjs');
const started: { child: ChildProcess; dir: string }[] = [];

/** Starts the demo with `poolSize` in its environment (undefined: the variable unset); resolves with its thread count once it answered with a signed token. */
async function threadsOfDemo(poolSize: string | undefined): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-threadpool-'));
  const env = { ...process.env };
  delete env['UV_THREADPOOL_SIZE'];
  if (poolSize !== undefined) env['UV_THREADPOOL_SIZE'] = poolSize;
  const child = spawn(process.execPath, [
    START, '--port', '0', '--runtime', 'process', '--log-level', 'silent', '--engine-socket', join(dir, 'engine.sock'), '--state-dir', dir,
  ], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push({ child, dir });
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  expect(await until(async () => /Ctrl-C stops the demo/.test(stdout), 20_000)).toBe(true);
  const base = /http:\/\/127\.0\.0\.1:\d+/.exec(stdout)![0];
  // A signed token: the pool has certainly started (signing is one of its jobs).
  const res = await fetch(`${base}/token?service=registry.local`, { headers: { authorization: `Basic ${Buffer.from('alice:wonderland').toString('base64')}` } });
  expect(res.status).toBe(200);
  return readdirSync(`/proc/${child.pid}/task`).length;
}

afterEach(async () => {
  for (const { child, dir } of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('the demo runs no more threadpool threads than cores (up to 4) unless UV_THREADPOOL_SIZE is set', () => {
  test('unset, the pool has min(4, cores) threads: as many as with UV_THREADPOOL_SIZE set to that, and that many minus one more than with 1', async () => {
    const expected = Math.min(4, availableParallelism());
    const one = await threadsOfDemo('1');
    const byDefault = await threadsOfDemo(undefined);
    const explicit = await threadsOfDemo(String(expected));
    expect(byDefault).toBe(explicit);
    expect(byDefault - one).toBe(expected - 1);
  }, 60_000);

  test('an operator\'s UV_THREADPOOL_SIZE is kept, above the default too', async () => {
    const one = await threadsOfDemo('1');
    const six = await threadsOfDemo('6');
    expect(six - one).toBe(5);
  }, 60_000);
});
