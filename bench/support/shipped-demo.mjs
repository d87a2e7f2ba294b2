// The demo process as `npm run demo` starts it (node demo/dist/start.cjs, default flags but for the
// port, --state-dir and --engine-socket, and, as an operator starts it, --key/--cert of its own
// signing key and --users naming an htpasswd file): request logs at info on stdout, metrics on,
// htpasswd logins, the default ACL, the sandbox runtime. Its stdout goes to a `cat` that reads it at once
// and discards it, as a terminal or a log collector drains a pipe (not the bench's own event loop,
// which is busy driving the load). CPU time is read from /proc, as for any process.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSigningKey } from '../../dist/index.js';
import { mountsUnder } from '../../dist/engine/runtime/sandbox/overlay-rootfs.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Clock ticks per second of /proc/PID/stat (USER_HZ: 100 on Linux). */
const TICKS = 100;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** CPU time (user + system, every thread) of a process so far, in µs. */
export function processCpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / TICKS;
}

/**
 * The main thread's time so far (/proc/PID/task/PID/schedstat, in ns): on a CPU, and runnable but
 * waiting for one. Wall time minus both is the time its event loop had nothing to do: the "wait"
 * a profile shows as idle, told apart from the machine being busy with other work.
 */
export function mainThreadTimes(pid) {
  const [onCpu, runQueue] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { onCpu, runQueue, wall: Number(process.hrtime.bigint()) };
}

/** Share (0-1) of the wall time between two {@link mainThreadTimes} readings the main thread was idle. */
export function idleShare(a, b) {
  const wall = b.wall - a.wall;
  return wall > 0 ? Math.max(0, 1 - (b.onCpu - a.onCpu + b.runQueue - a.runQueue) / wall) : 0;
}

/**
 * Starts the demo, with `args` added to its command line, `execArgv` given to node (e.g.
 * --cpu-prof) and `env` as its environment; resolves once it answers on its port.
 */
export async function startShippedDemo({ args = [], execArgv = [], env = process.env } = {}) {
  const state = mkdtempSync(join(tmpdir(), 'dockgate-bench-shipped-demo-'));
  const port = await freePort();
  // The operator's files, as issue 35 started it: a signing key and certificate, and a users file.
  const key = generateSigningKey({ commonName: 'bench demo signer' });
  writeFileSync(join(state, 'signing-key.pem'), key.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(state, 'signing-cert.pem'), key.certificatePem);
  copyFileSync(join(root, 'demo/users.htpasswd'), join(state, 'users.htpasswd'));
  const drain = spawn('cat', [], { stdio: ['pipe', 'ignore', 'inherit'] });
  const demo = spawn(process.execPath, [
    ...execArgv, join(root, 'demo/dist/start.cjs'), '--port', String(port), '--state-dir', state, '--engine-socket', join(state, 'engine.sock'),
    '--key', join(state, 'signing-key.pem'), '--cert', join(state, 'signing-cert.pem'), '--users', join(state, 'users.htpasswd'), ...args,
  ], { cwd: root, env, stdio: ['ignore', drain.stdin, 'inherit'] });
  // The demo holds its own copy of the pipe's write end; cat sees EOF when the demo exits.
  drain.stdin.destroy();
  let exited = false;
  const exit = new Promise((resolve) => demo.once('exit', (code, signal) => { exited = true; resolve({ code, signal }); }));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`the demo exited before answering: ${JSON.stringify(await exit)}`);
    try {
      if ((await fetch(`${url}/v2/`)).status === 401) break;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error('the demo did not answer within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const basic = `Basic ${Buffer.from('alice:wonderland').toString('base64')}`;
  return {
    url,
    port,
    pid: demo.pid,
    /** Its --state-dir (container overlays, image store). */
    stateDir: state,
    /** The engine API's Unix socket (--engine-socket): the local administrator's, as dockerd's socket is. */
    engineSocket: join(state, 'engine.sock'),
    cpuMicros: async () => processCpuMicros(demo.pid),
    mainThread: () => mainThreadTimes(demo.pid),
    /** `docker login` then a pull's GET: a token for alice/hello (pull) and a refresh token (bcrypt runs once, here). */
    login: async (scope = 'repository:alice/hello:pull') => {
      const query = new URLSearchParams({ service: 'registry.local', scope, offline_token: 'true', client_id: 'bench' });
      const res = await fetch(`${url}/token?${query}`, { headers: { authorization: basic } });
      const body = await res.json();
      if (res.status !== 200 || !body.refresh_token) throw new Error(`demo login answered ${res.status} ${JSON.stringify(body)}`);
      return { accessToken: body.token ?? body.access_token, refreshToken: body.refresh_token };
    },
    stop: async () => {
      if (!exited) {
        demo.kill('SIGINT');
        const timer = setTimeout(() => demo.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(timer);
      }
      drain.kill();
      // A demo killed before it closed its runtime leaves container overlays mounted: detached, so
      // that removing the state directory never walks into a mounted root.
      for (const target of mountsUnder(state)) spawnSync('umount', ['-l', '--', target]);
      rmSync(state, { recursive: true, force: true });
    },
  };
}
