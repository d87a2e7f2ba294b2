// Bench: the sandbox runtime rootless beside root, in the same run. The demo (demo/dist/main.js,
// which embeds sandboxRuntime) is started twice, as root and as an ordinary user
// (BENCH_ROOTLESS_USER, default dgrootless; started with setpriv), each with a state directory
// of its own, and the Docker CLI drives both:
//  - `docker run --rm busybox true`, BENCH_RUNS times (15) after 2 warm-ups, the median; the same
//    with `-u 1000` (rootless with the user's subordinate range mapped: a nested single-id namespace);
//  - `docker logs` of a finished container that wrote BENCH_LOG_MIB MiB (256), piped to `wc -c`.
// The two servers alternate (root, rootless, root…) so that both see the same machine load.
// Prints each figure and the ratio rootless / root. Needs root (to start the other user), bwrap,
// slirp4netns, /dev/net/tun open to the user and `npm run build && npm run build:demo`;
// skips naming what is missing. `npm run bench:rootless`.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const USER = process.env.BENCH_ROOTLESS_USER ?? 'dgrootless';
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const LOG_MIB = Number(process.env.BENCH_LOG_MIB ?? 256);
const DOCKER = existsSync('/usr/local/bin/docker') ? '/usr/local/bin/docker' : 'docker';
const MAIN = join(process.cwd(), 'demo/dist/main.js');

const skip = (why) => {
  console.log(`rootless beside root: skipped (${why})`);
  process.exit(0);
};
if (process.geteuid?.() !== 0) skip('run as root: it starts the demo as another user');
if (!existsSync(MAIN)) skip('demo/dist/main.js missing: npm run build && npm run build:demo');
const pw = spawnSync('getent', ['passwd', USER], { encoding: 'utf8' });
if (pw.status !== 0) skip(`no user ${USER} (BENCH_ROOTLESS_USER; .ci/run creates dgrootless)`);
const [, , uid, gid, , home] = pw.stdout.trim().split(':');

async function start(asUser) {
  const dir = mkdtempSync(join(tmpdir(), `dockgate-bench-${asUser ? 'rootless' : 'root'}-`));
  if (asUser) chownSync(dir, Number(uid), Number(gid));
  const socket = join(dir, 'engine.sock');
  const argv = [MAIN, '--port', '0', '--engine-socket', socket, '--state-dir', join(dir, 'state'), '--log-level', 'silent'];
  const child = asUser
    ? spawn('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--init-groups', '--', process.execPath, ...argv], { env: { PATH: process.env.PATH, HOME: home }, stdio: 'ignore' })
    : spawn(process.execPath, argv, { stdio: 'ignore' });
  for (let i = 0; i < 200 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(socket)) throw new Error(`the ${asUser ? 'rootless' : 'root'} demo did not start`);
  const docker = (args) => new Promise((resolve, reject) => {
    execFile(DOCKER, args, { env: { PATH: process.env.PATH, HOME: dir, DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: join(dir, 'cli') }, maxBuffer: 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker ${args.join(' ')}: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
  const stop = () => {
    child.kill('SIGTERM');
    return new Promise((r) => child.once('exit', r)).then(() => rmSync(dir, { recursive: true, force: true }));
  };
  return { socket, docker, stop, dir };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** `docker logs ID | wc -c` against one server; resolves the milliseconds, checking the count. */
function logsMs(server, id) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const sh = spawn('/bin/sh', ['-c', `"${DOCKER}" logs ${id} | wc -c`], {
      env: { PATH: process.env.PATH, HOME: server.dir, DOCKER_HOST: `unix://${server.socket}`, DOCKER_CONFIG: join(server.dir, 'cli') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    sh.stdout.on('data', (c) => (out += c));
    sh.once('error', reject);
    sh.once('exit', () => (Number(out.trim()) === LOG_MIB * 1024 * 1024 ? resolve(performance.now() - t0) : reject(new Error(`docker logs gave ${out.trim()} bytes`))));
  });
}

const root = await start(false);
const rootless = await start(true);
try {
  const servers = [['root', root], ['rootless', rootless]];
  for (const [, s] of servers) for (let i = 0; i < 2; i++) await s.docker(['run', '--rm', 'busybox', 'true']);
  const runs = { root: [], rootless: [], 'root -u 1000': [], 'rootless -u 1000': [] };
  for (let i = 0; i < RUNS; i++) {
    for (const [name, s] of servers) runs[name].push(await timed(() => s.docker(['run', '--rm', 'busybox', 'true'])));
    for (const [name, s] of servers) runs[`${name} -u 1000`].push(await timed(() => s.docker(['run', '--rm', '-u', '1000', 'busybox', 'true'])));
  }
  const logs = {};
  const opts = ['--log-opt', `max-size=${LOG_MIB + 16}m`, '--log-opt', 'max-file=1'];
  for (const [name, s] of servers) {
    const id = (await s.docker(['run', '-d', ...opts, 'busybox', 'head', '-c', String(LOG_MIB * 1024 * 1024), '/dev/zero'])).trim();
    await s.docker(['wait', id]);
    logs[name] = await logsMs(s, id);
    await s.docker(['rm', id]);
  }
  const r = median(runs.root);
  const rl = median(runs.rootless);
  console.log(`docker run --rm busybox true (median of ${RUNS}): root ${r.toFixed(0)} ms, rootless ${rl.toFixed(0)} ms: rootless/root ${(rl / r).toFixed(2)}x`);
  const ru = median(runs['root -u 1000']);
  const rlu = median(runs['rootless -u 1000']);
  console.log(`docker run --rm -u 1000 busybox true (median of ${RUNS}): root ${ru.toFixed(0)} ms, rootless ${rlu.toFixed(0)} ms: rootless/root ${(rlu / ru).toFixed(2)}x`);
  const mbps = (ms) => (LOG_MIB / (ms / 1000)).toFixed(0);
  console.log(`docker logs of ${LOG_MIB} MiB: root ${mbps(logs.root)} MiB/s, rootless ${mbps(logs.rootless)} MiB/s: rootless/root throughput ${(logs.root / logs.rootless).toFixed(2)}x`);
} finally {
  await root.stop();
  await rootless.stop();
}
