import { test, expect, afterAll, beforeAll, jest } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { describeWithPeers, dockerd, type PeerCheck } from '../../support/peers.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { Cgroups } from '../../../lib/engine/linux/cgroups.js';
import { listenOnSocket } from '../../engine/helpers.js';
import { dockerCli, DOCKER_CLI } from '../support/index.js';

// Issue 25: details where dockgate differed from dockerd 20.10 and made docker-py's own tests
// fail. One docker-py script probes them all (fixtures/docker-py-fidelity.py); it runs against
// dockerd itself and against dockgate, and each must give dockerd's answer.
const here = dirname(fileURLToPath(import.meta.url));
jest.setTimeout(180_000);
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter (util-linux)', available: () => hasBwrap };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };
const busyboxFile: PeerCheck = { name: '/bin/busybox (busybox-static), the probe image is made of it', available: () => existsSync('/bin/busybox') };

const NOT_MANAGER = 'This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.';

interface Probe {
  swarm: Record<string, { raised: string | null; status?: number; explanation?: string }>;
  exec: { created_tty_started_plain: [string | null, string | null]; created_plain_started_tty: string };
  diff_fresh: unknown;
  diff_written: [string, number][];
  load: Record<'True' | 'False', { raised: string | null; messages?: { errorDetail: { message: string }; error: string }[] }> & { model: string | null };
  prune: { deleted: boolean; space: number };
  inspect: { StopTimeout: unknown; Isolation: unknown; Memory: unknown; MemorySwap: unknown; HostConfigKeys: string[]; ConfigKeys: string[]; Keys: string[] };
  info: Record<string, unknown>;
}

function probe(socket: string): Promise<Probe> {
  const tag = `dockgate-fidelity/bb:${process.pid}`;
  const label = `dockgate-fidelity-${process.pid}-${Date.now()}`;
  return new Promise((resolve, reject) => {
    execFile('python3', [join(here, '../fixtures/docker-py-fidelity.py'), tag, label], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}` }, timeout: 150_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`docker-py probe failed: ${stderr || error.message}`));
      else resolve(JSON.parse(stdout) as Probe);
    });
  });
}

/** The answers dockerd 20.10 gives outside a swarm (checked on this machine), which dockgate must give too. */
function expectDockerdAnswers(out: Probe): void {
  // Swarm: 503 with dockerd's words; leave_swarm(force=True) swallows that 503, as SDK teardowns rely on.
  for (const call of ['inspect_swarm', 'nodes', 'services', 'tasks', 'secrets', 'configs', 'unlock_key']) {
    expect([call, out.swarm[call]]).toEqual([call, { raised: 'APIError', status: 503, explanation: NOT_MANAGER }]);
  }
  expect(out.swarm.leave_swarm).toEqual({ raised: 'APIError', status: 503, explanation: 'This node is not part of a swarm' });
  expect(out.swarm.leave_swarm_force).toEqual({ raised: null });
  // Exec: framed by start's Tty. Created with a TTY (its \r\n), started without: frames docker-py demultiplexes.
  expect(out.exec.created_tty_started_plain).toEqual(['from-a-tty\r\n', null]);
  // Created without a TTY, started with one: the bytes come raw (no 8-byte frame headers in them).
  expect(out.exec.created_plain_started_tty).toBe('raw-out\n');
  // diff: nothing for a container that wrote nothing (no /dev, /proc, /sys or /etc entries), dockerd's null.
  expect(out.diff_fresh).toBeNull();
  expect(out.diff_written).toEqual([['/data', 1], ['/data/f', 1], ['/data/g', 1]]);
  // load of a bad archive: 200 and the error in the message stream, quiet or not; the model raises ImageLoadError.
  for (const quiet of ['True', 'False'] as const) {
    const answer = out.load[quiet];
    expect(answer.raised).toBeNull();
    expect(answer.messages).toHaveLength(1);
    expect(answer.messages![0]!.error).toBe(answer.messages![0]!.errorDetail.message);
    expect(answer.messages![0]!.error).not.toBe('');
  }
  expect(out.load.model).toBe('ImageLoadError');
  // prune: the bytes the container wrote (300 KiB + "abc\n"), as dockerd sums its writable layer.
  expect(out.prune).toEqual({ deleted: true, space: 300 * 1024 + 4 });
  // inspect: what docker-py's container tests read back (stop_timeout, isolation, the doubled swap default).
  expect(out.inspect).toMatchObject({ StopTimeout: 25, Isolation: 'default', Memory: 64 * 1024 * 1024, MemorySwap: 128 * 1024 * 1024 });
  // info: every limit capability dockerd reports is there, as a boolean.
  for (const key of ['MemoryLimit', 'SwapLimit', 'KernelMemory', 'KernelMemoryTCP', 'CpuCfsPeriod', 'CpuCfsQuota', 'CPUShares', 'CPUSet', 'PidsLimit', 'OomKillDisable']) {
    expect([key, typeof out.info[key]]).toEqual([key, 'boolean']);
  }
}

/**
 * Inspect fields dockerd has that a local runtime leaves out on purpose: values that would claim
 * what it does not do (ShmSize, IpcMode, CgroupnsMode, masked paths), exec ids it does
 * not list there, and its log file path.
 */
const LEFT_OUT = ['ShmSize', 'IpcMode', 'CgroupnsMode', 'MaskedPaths', 'ReadonlyPaths', 'ExecIDs', 'LogPath'];
let reference: Probe | undefined;

describeWithPeers('docker-py 7 against dockerd itself: the reference answers', [dockerPy, dockerd(), busyboxFile], () => {
  test('swarm 503s, exec framing by start Tty, load errors in the stream, diff, prune and info', async () => {
    const out = await probe('/var/run/docker.sock');
    reference = out;
    expectDockerdAnswers(out);
    expect(out.load.True.messages![0]!.error).toBe('Error processing tar file(exit status 1): unexpected EOF');
  });
});

const runtimes: [string, () => ContainerRuntime, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), [dockerd(), busyboxFile]],
];

for (const [label, make, peers] of runtimes) {
  describeWithPeers(`docker-py 7 through dockgate (${label}) gets dockerd's answers`, [dockerPy, ...peers], () => {
    let runtime: ContainerRuntime;
    let listening: ReturnType<typeof listenOnSocket>;
    let out: Probe;
    beforeAll(async () => {
      runtime = make();
      listening = listenOnSocket(runtime, '1.12-1.41');
      out = await probe((await listening).socket);
    });
    afterAll(async () => {
      await (await listening).close();
      await runtime.close?.();
    });
    test('swarm 503s, exec framing by start Tty, load errors in the stream, diff, prune and info', () => {
      expectDockerdAnswers(out);
    });
    test('inspect has every top-level, Config and HostConfig field dockerd\'s has (but those left out on purpose)', () => {
      if (!reference) return; // dockerd is not here: its field list is unknown (the reference describe says why).
      for (const [mine, theirs] of [[out.inspect.Keys, reference.inspect.Keys], [out.inspect.ConfigKeys, reference.inspect.ConfigKeys], [out.inspect.HostConfigKeys, reference.inspect.HostConfigKeys]] as const) {
        expect(theirs.filter((k) => !mine.includes(k) && !LEFT_OUT.includes(k))).toEqual([]);
      }
    });
    if (label === 'sandbox runtime') {
      test('/info says what the sandbox can limit: the cgroup v1 controllers it manages (cpusets among them), and never kernel memory or OOM-kill disabling', () => {
        const controllers = new Set(Cgroups.detect().controllers);
        expect(out.info).toMatchObject({
          MemoryLimit: controllers.has('memory'),
          CpuCfsPeriod: controllers.has('cpu'),
          CpuCfsQuota: controllers.has('cpu'),
          CPUShares: controllers.has('cpu'),
          PidsLimit: controllers.has('pids'),
          KernelMemory: false,
          KernelMemoryTCP: false,
          CPUSet: controllers.has('cpuset'),
          OomKillDisable: false,
          CgroupDriver: controllers.size > 0 ? 'cgroupfs' : 'none',
          CgroupVersion: controllers.size > 0 ? '1' : '',
        });
      });
    }
  });
}

/** What Docker CLI 28 prints for the swarm commands on dockerd 20.10 outside a swarm (read on this machine). */
const CLI_SWARM: [string[], string][] = [
  [['node', 'ls'], `Error response from daemon: ${NOT_MANAGER}\n`],
  [['service', 'ls'], `Error response from daemon: ${NOT_MANAGER}\n`],
  [['secret', 'ls'], `Error response from daemon: ${NOT_MANAGER}\n`],
  [['config', 'ls'], `Error response from daemon: ${NOT_MANAGER}\n`],
  [['stack', 'ls'], `Error response from daemon: ${NOT_MANAGER}\n`],
  [['swarm', 'unlock-key'], `could not fetch unlock key: Error response from daemon: ${NOT_MANAGER}\n`],
  [['swarm', 'leave'], 'Error response from daemon: This node is not part of a swarm\n'],
];
const cliPeer: PeerCheck = { name: 'Docker CLI 28 at /usr/local/bin/docker', available: () => existsSync(DOCKER_CLI) };

const cliEngines: [string, () => ContainerRuntime | undefined, PeerCheck[]][] = [
  ['dockerd itself', () => undefined, [dockerd()]],
  ['the sandbox runtime', () => sandboxRuntime(), [bwrap]],
];
for (const [label, make, peers] of cliEngines) {
  describeWithPeers(`Docker CLI 28 swarm commands against ${label}: dockerd's errors, exit code 1`, [cliPeer, ...peers], () => {
    const runtime = make();
    const listening = runtime ? listenOnSocket(runtime, '1.12-1.41') : undefined;
    afterAll(async () => {
      await (await listening)?.close();
      await runtime?.close?.();
    });
    test.each(CLI_SWARM)('docker %p', async (args, stderr) => {
      const socket = listening ? (await listening).socket : '/var/run/docker.sock';
      const cli = await dockerCli();
      try {
        expect(await cli.docker(args, { env: { DOCKER_HOST: `unix://${socket}` } })).toMatchObject({ code: 1, stdout: '', stderr });
      } finally {
        await cli.dispose();
      }
    });
    if (runtime) {
      test('docker swarm init is refused, naming that dockgate has no swarm mode', async () => {
        const cli = await dockerCli();
        try {
          const r = await cli.docker(['swarm', 'init'], { env: { DOCKER_HOST: `unix://${(await listening!).socket}` } });
          expect(r.code).toBe(1);
          expect(r.stderr).toBe('Error response from daemon: docker swarm init: swarm mode is not supported by dockgate (the sandbox runtime has no swarm)\n');
        } finally {
          await cli.dispose();
        }
      });
    }
  });
}
