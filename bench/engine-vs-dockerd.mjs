// Bench (d): the demo as `npm run demo` starts it (sandbox runtime, request logs at info, metrics
// on; bench/support/shipped-demo.mjs), driven from outside on its engine socket, against dockerd
// on this machine (/var/run/docker.sock):
//  - `GET /v1.28/containers/json` with 40 running containers on each side, 16 connections
//    (autocannon), rounds alternating between the two, medians of the rounds; target: at least
//    dockerd's rate;
//  - `docker run --rm IMAGE true` typed into the Docker CLI, alternating between the two engines,
//    median and p90 of N runs; target <= 1.0x dockerd. Measured as typed (the default network:
//    the sandbox's own namespace behind slirp4netns; dockerd's default here, which depends on how
//    it was started, printed below) and with `--network none` on both;
//  - 16 concurrent `docker run --rm IMAGE true` (as typed), the wall time until the last ends,
//    alternating between the two engines; target <= 0.5x dockerd's.
// Plain ESM on dist/ and demo/dist/: `npm run bench:engine`. Knobs: BENCH_DURATION (s per list
// round, 5), BENCH_ROUNDS (list rounds, 3), BENCH_RUNS (run --rm runs per side and setting, 20),
// BENCH_CONCURRENT (concurrent runs, 16), BENCH_BURSTS (bursts per side, 5), BENCH_ONLY=concurrent
// (the concurrent bursts alone). Each burst also prints the demo's CPU for it: the server, its
// command helpers and every child they reaped (from /proc), which a loaded machine's noise in wall
// time does not move.
import autocannon from 'autocannon';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { benchNumber } from './support/bench-number.mjs';
import { startShippedDemo } from './support/shipped-demo.mjs';
import { runDetached } from './support/run-detached.mjs';

const run = promisify(execFile);
const DOCKERD = '/var/run/docker.sock';
const CLI = existsSync('/usr/local/bin/docker') ? '/usr/local/bin/docker' : 'docker';
const DOCKERD_IMAGE = process.env.BENCH_DOCKERD_IMAGE ?? 'busybox:local';
const CONTAINERS = 40;
const CONNECTIONS = 16;
const DURATION = benchNumber('BENCH_DURATION', 5);
const ROUNDS = benchNumber('BENCH_ROUNDS', 3);
const RUNS = benchNumber('BENCH_RUNS', 20);
const CONCURRENT = benchNumber('BENCH_CONCURRENT', 16);
const BURSTS = benchNumber('BENCH_BURSTS', 5);
const ONLY_CONCURRENT = process.env.BENCH_ONLY === 'concurrent';

const skip = (why) => {
  console.log(`engine vs dockerd: skipped (${why})`);
  process.exit(0);
};
if (!existsSync(DOCKERD)) skip(`no dockerd at ${DOCKERD}`);
if (spawnSync('bwrap', ['--version']).status !== 0) skip('bwrap missing: apt-get install bubblewrap');
if (spawnSync(CLI, ['--version']).status !== 0) skip(`no Docker CLI at ${CLI}`);

const configDir = mkdtempSync(join(tmpdir(), 'dockgate-bench-cli-'));
/** The Docker CLI against one engine, as a user runs it. */
const docker = (socket, args) => run(CLI, args, {
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir },
  maxBuffer: 1024 * 1024,
});

const dockerdImages = (await docker(DOCKERD, ['images', '-q', DOCKERD_IMAGE])).stdout.trim();
if (dockerdImages === '') skip(`dockerd has no ${DOCKERD_IMAGE} (see /work/shared/PEERS.md: tar a busybox root and docker import it)`);
const dockerdVersion = (await docker(DOCKERD, ['version', '-f', '{{.Server.Version}} (API {{.Server.APIVersion}})'])).stdout.trim();
const dockerdDefaultNetwork = await docker(DOCKERD, ['network', 'inspect', 'bridge', '-f', '{{.Driver}}']).then(() => 'bridge (veth)', () => 'no bridge network (dockerd --bridge=none): none');

console.log('engine vs dockerd: the demo as `npm run demo` starts it (sandbox runtime, logs at info, metrics on), driven from outside on its engine socket');
console.log(`machine: ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Linux ${release()}, node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; dockerd ${dockerdVersion}`);

const demo = await startShippedDemo();
const demoSocket = demo.engineSocket;
const engines = [
  { name: 'dockerd', socket: DOCKERD, image: DOCKERD_IMAGE },
  { name: 'dockgate', socket: demoSocket, image: 'busybox' },
];
const created = { dockerd: [], dockgate: [] };

try {
  // --- GET /containers/json, 40 running containers each -------------------------------------
  if (!ONLY_CONCURRENT) for (const e of engines) {
    for (let i = 0; i < CONTAINERS; i++) {
      created[e.name].push(await runDetached(docker, e, ['--network', 'none', '--label', 'dockgate-bench=list', e.image, 'sleep', '3600']));
    }
  }
  const list = (socket, seconds) => new Promise((resolve, reject) => {
    autocannon({ url: 'http://localhost/v1.28/containers/json', socketPath: socket, connections: CONNECTIONS, duration: seconds }, (err, result) => {
      if (err) return reject(err);
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
        return reject(new Error(`${socket}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`));
      }
      resolve(result.requests.average);
    });
  });
  if (!ONLY_CONCURRENT) {
  const listed = await (await fetchJson(demoSocket, '/v1.28/containers/json')).length;
  if (listed !== CONTAINERS) throw new Error(`the demo lists ${listed} running containers, not ${CONTAINERS}`);
  for (const e of engines) await list(e.socket, 1);
  const rates = { dockerd: [], dockgate: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating, and in turned order each round, so drift in the machine's load hits both.
    for (const e of round % 2 === 0 ? engines : [...engines].reverse()) rates[e.name].push(await list(e.socket, DURATION));
  }
  const m = { dockerd: median(rates.dockerd), dockgate: median(rates.dockgate) };
  console.log(`\nGET /v1.28/containers/json, ${CONTAINERS} running containers each, ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${DURATION} s (autocannon on the engine sockets)`);
  for (const e of engines) console.log(`  ${e.name.padEnd(9)} ${rates[e.name].map((r) => r.toFixed(0)).join(' / ')} req/s, median ${m[e.name].toFixed(0)}`);
  console.log(`  ratio dockgate/dockerd: ${(m.dockgate / m.dockerd).toFixed(2)}x (target >= 1.0)`);
  for (const e of engines) {
    await docker(e.socket, ['rm', '-f', ...created[e.name]]);
    created[e.name] = [];
  }
  }

  // --- docker run --rm IMAGE true, through the CLI --------------------------------------------
  const settings = [
    ['as typed (default network)', [], `dockgate: own network namespace + slirp4netns; dockerd here: ${dockerdDefaultNetwork}`],
    ['--network none', ['--network', 'none'], 'both: a network namespace with loopback only'],
  ];
  for (const [label, extra, what] of ONLY_CONCURRENT ? [] : settings) {
    const times = { dockerd: [], dockgate: [] };
    const failed = { dockerd: [], dockgate: [] };
    // A failed run is counted and printed, not timed, and the run is made again (dockerd on a
    // loaded machine now and then fails one with an overlay2 error).
    const once = async (e) => {
      for (;;) {
        const t0 = performance.now();
        try {
          await docker(e.socket, ['run', '--rm', ...extra, e.image, 'true']);
          return performance.now() - t0;
        } catch (error) {
          failed[e.name].push(String(error.stderr ?? error.message).split('\n')[0]);
          if (failed[e.name].length > 10) throw error;
        }
      }
    };
    for (const e of engines) await once(e);
    for (let i = 0; i < RUNS; i++) {
      for (const e of i % 2 === 0 ? engines : [...engines].reverse()) times[e.name].push(await once(e));
    }
    console.log(`\ndocker run --rm ${[...extra, 'IMAGE', 'true'].join(' ')} (${label}; ${what}), ${RUNS} runs each, alternating; Docker CLI ${CLI}`);
    for (const e of engines) {
      console.log(`  ${e.name.padEnd(9)} median ${median(times[e.name]).toFixed(0)} ms, p90 ${quantile(times[e.name], 0.9).toFixed(0)} ms${failed[e.name].length > 0 ? `; ${failed[e.name].length} failed and made again: ${failed[e.name].join(' | ')}` : ''}`);
    }
    console.log(`  ratio dockgate/dockerd: median ${(median(times.dockgate) / median(times.dockerd)).toFixed(2)}x, p90 ${(quantile(times.dockgate, 0.9) / quantile(times.dockerd, 0.9)).toFixed(2)}x (target <= 1.0)`);
  }

  // --- CONCURRENT docker run --rm IMAGE true at once ------------------------------------------
  {
    const walls = { dockerd: [], dockgate: [] };
    const failed = { dockerd: [], dockgate: [] };
    const cpu = [];
    /** One run, made again when it fails (dockerd on a loaded machine fails some with an overlay2 or runc error). */
    const once = async (e) => {
      for (;;) {
        try {
          return await docker(e.socket, ['run', '--rm', e.image, 'true']);
        } catch (error) {
          failed[e.name].push(String(error.stderr ?? error.message).split('\n')[0]);
          if (failed[e.name].length > 10 * CONCURRENT) throw error;
        }
      }
    };
    for (let i = 0; i < BURSTS; i++) {
      for (const e of i % 2 === 0 ? engines : [...engines].reverse()) {
        const c0 = e.name === 'dockgate' ? demoTreeCpuMs(demo.pid) : 0;
        const t0 = performance.now();
        await Promise.all(Array.from({ length: CONCURRENT }, () => once(e)));
        walls[e.name].push(performance.now() - t0);
        if (e.name === 'dockgate') cpu.push(demoTreeCpuMs(demo.pid) - c0);
      }
    }
    console.log(`\n${CONCURRENT} concurrent docker run --rm IMAGE true (as typed), wall time until the last ends, ${BURSTS} bursts each, alternating; Docker CLI ${CLI}`);
    for (const e of engines) {
      console.log(`  ${e.name.padEnd(9)} ${walls[e.name].map((w) => w.toFixed(0)).join(' / ')} ms, median ${median(walls[e.name]).toFixed(0)}${failed[e.name].length > 0 ? `; ${failed[e.name].length} runs failed and were made again: ${[...new Set(failed[e.name])].slice(0, 2).join(' | ')}` : ''}`);
    }
    console.log(`  dockgate's CPU per burst (server, command helpers, every child they reaped): ${cpu.map((c) => c.toFixed(0)).join(' / ')} ms, median ${median(cpu).toFixed(0)}`);
    const ratios = walls.dockgate.map((w, i) => w / walls.dockerd[i]);
    console.log(`  ratio dockgate/dockerd: median ${(median(walls.dockgate) / median(walls.dockerd)).toFixed(2)}x (bursts ${ratios.map((r) => r.toFixed(2)).join(', ')}; target <= 0.5)`);
  }
} finally {
  for (const e of engines) if (created[e.name].length > 0) await docker(e.socket, ['rm', '-f', ...created[e.name]]).catch(() => undefined);
  await demo.stop();
  rmSync(configDir, { recursive: true, force: true });
}

/** CPU time (ms) of a process and the children it reaped: utime, stime, cutime, cstime of /proc/PID/stat. */
function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 10;
}

/** The demo's CPU so far with its command helpers' (which spawn a start's children and reap them). */
function demoTreeCpuMs(pid) {
  let total = cpuMs(pid);
  for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) {
    try {
      if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('parentPort')) total += cpuMs(Number(child));
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

function median(xs) {
  return quantile(xs, 0.5);
}

function quantile(xs, q) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function fetchJson(socket, path) {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    request({ socketPath: socket, path }, async (res) => {
      let text = '';
      for await (const c of res) text += c;
      resolve(JSON.parse(text));
    }).on('error', reject).end();
  });
}
