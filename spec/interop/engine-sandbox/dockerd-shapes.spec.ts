import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import { FrameDecoder, type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../../engine/helpers.js';

// Small shapes SDK suites check, run the same way against the sandbox runtime and against dockerd
// on this machine, whose answers are the reference: exec of a command that cannot be run, stop of
// a process that ignores SIGTERM, ps -l / -n, container prune, logs one frame per line; and the
// sandbox's stats `networks` (dockerd here runs without a bridge, so only its `none` shape is compared).

const CLI = '/usr/local/bin/docker';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));
const json = (b: Buffer): any => JSON.parse(b.toString());

function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    execFile(CLI, args, { env, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

interface Engine { socket: string; image: string; run: string[] }
let sandbox: { runtime: ContainerRuntime; listening: Awaited<ReturnType<typeof listenOnSocket>> } | undefined;
afterAll(async () => {
  await sandbox?.listening.close();
  await sandbox?.runtime.close?.();
});

const engines: [string, PeerCheck[], () => Promise<Engine>][] = [
  ['the sandbox runtime', [program(CLI), bwrap], async () => {
    if (!sandbox) {
      const runtime = sandboxRuntime();
      sandbox = { runtime, listening: await listenOnSocket(runtime, { min: '1.12', max: '1.41' }) };
    }
    return { socket: sandbox.listening.socket, image: 'busybox', run: [] };
  }],
  // dockerd here runs with --bridge=none: its containers are made with --network none.
  ['dockerd (reference)', [program(CLI), dockerd(), dockerImage('busybox:local')], async () => ({ socket: '/var/run/docker.sock', image: 'busybox:local', run: ['--network', 'none'] })],
];

const RUNC = 'OCI runtime exec failed: exec failed: unable to start container process: exec:';

for (const [label, peers, open] of engines) {
  describeWithPeers(`an exec whose command cannot be run exits 126 with runc's message (${label})`, peers, () => {
    test('missing command, missing path, a file that is not executable, a directory', async () => {
      const e = await open();
      const id = (await docker(e.socket, ['run', '-d', ...e.run, e.image, 'sleep', '60'])).stdout.trim();
      try {
        expect((await docker(e.socket, ['exec', id, 'sh', '-c', 'echo hi > /plain; chmod 644 /plain; mkdir /dir'])).code).toBe(0);
        const cases: [string, string][] = [
          ['nosuch', `${RUNC} "nosuch": executable file not found in $PATH: unknown`],
          ['plain', `${RUNC} "plain": executable file not found in $PATH: unknown`],
          ['/nonexistent/x', `${RUNC} "/nonexistent/x": stat /nonexistent/x: no such file or directory: unknown`],
          ['/plain', `${RUNC} "/plain": permission denied: unknown`],
          ['/dir', `${RUNC} "/dir": permission denied: unknown`],
        ];
        for (const [command, message] of cases) {
          const r = await docker(e.socket, ['exec', id, command]);
          expect({ command, code: r.code, out: (r.stdout + r.stderr).trim() }).toEqual({ command, code: 126, out: message });
        }
        // A command that runs and fails keeps its own status and output.
        const failing = await docker(e.socket, ['exec', id, 'sh', '-c', 'echo bwrap: execvp; exit 1']);
        expect([failing.code, failing.stdout]).toEqual([1, 'bwrap: execvp\n']);
        // The exec's inspect says 126 too (docker-py reads ExitCode there).
        const created = json((await socketRequest(e.socket, 'POST', `/v1.41/containers/${id}/exec`, { Cmd: ['nosuch'], AttachStdout: true })).body);
        const started = await socketRequest(e.socket, 'POST', `/v1.41/exec/${created.Id}/start`, { Detach: false });
        expect(new FrameDecoder().push(started.body).map((f) => [f.stream, f.payload.toString()])).toEqual([[1, `${RUNC} "nosuch": executable file not found in $PATH: unknown\r\n`]]);
        expect(json((await socketRequest(e.socket, 'GET', `/v1.41/exec/${created.Id}/json`)).body)).toMatchObject({ Running: false, ExitCode: 126 });
      } finally {
        await docker(e.socket, ['rm', '-f', id]);
      }
    });
  });

  describeWithPeers(`docker stop of a process that ignores SIGTERM kills it after the timeout: 137 (${label})`, peers, () => {
    test('a shell trapping TERM, and pid 1 without a handler', async () => {
      const e = await open();
      for (const cmd of [['sh', '-c', 'trap "" TERM; while true; do sleep 1; done'], ['sleep', '100']]) {
        const id = (await docker(e.socket, ['run', '-d', ...e.run, e.image, ...cmd])).stdout.trim();
        try {
          await new Promise((r) => setTimeout(r, 500)); // the trap is set
          const began = Date.now();
          expect((await docker(e.socket, ['stop', '-t', '1', id])).code).toBe(0);
          expect(Date.now() - began).toBeGreaterThanOrEqual(900);
          expect((await docker(e.socket, ['inspect', '-f', '{{.State.Status}} {{.State.ExitCode}}', id])).stdout.trim()).toBe('exited 137');
        } finally {
          await docker(e.socket, ['rm', '-f', id]);
        }
      }
    });
  });

  describeWithPeers(`docker ps -l and -n N list the latest containers whatever their state (${label})`, peers, () => {
    test('the CLI sends only limit; created and exited containers are counted, newest first', async () => {
      const e = await open();
      const mark = `dg-latest=${process.pid}-${Date.now()}`;
      const first = (await docker(e.socket, ['create', ...e.run, '--label', mark, e.image, 'true'])).stdout.trim();
      const second = (await docker(e.socket, ['run', '-d', ...e.run, '--label', mark, e.image, 'true'])).stdout.trim();
      try {
        await docker(e.socket, ['wait', second]);
        expect((await docker(e.socket, ['ps', '-q', '-l', '--no-trunc', '--filter', `label=${mark}`])).stdout.trim()).toBe(second);
        expect((await docker(e.socket, ['ps', '-q', '-n', '2', '--no-trunc', '--filter', `label=${mark}`])).stdout.trim().split('\n')).toEqual([second, first]);
        // Without a limit only running containers are listed.
        expect((await docker(e.socket, ['ps', '-q', '--filter', `label=${mark}`])).stdout.trim()).toBe('');
      } finally {
        await docker(e.socket, ['rm', '-f', first, second]);
      }
    });
  });

  describeWithPeers(`container prune removes every stopped container the filters select, created ones too (${label})`, peers, () => {
    test('label and until filters; ContainersDeleted and SpaceReclaimed; running and other labels stay', async () => {
      const e = await open();
      const mark = `dg-prune=${process.pid}-${Date.now()}`;
      const before = Math.floor(Date.now() / 1000) - 5;
      const created = (await docker(e.socket, ['create', ...e.run, '--label', mark, e.image, 'true'])).stdout.trim();
      const exited = (await docker(e.socket, ['run', '-d', ...e.run, '--label', mark, e.image, 'sh', '-c', 'echo x > /file'])).stdout.trim();
      const running = (await docker(e.socket, ['run', '-d', ...e.run, '--label', mark, e.image, 'sleep', '60'])).stdout.trim();
      const other = (await docker(e.socket, ['create', ...e.run, '--label', `${mark}-other`, e.image, 'true'])).stdout.trim();
      try {
        await docker(e.socket, ['wait', exited]);
        const filters = (f: object): string => encodeURIComponent(JSON.stringify(f));
        // Nothing was created before `before`: dockerd answers null, not [].
        const none = await socketRequest(e.socket, 'POST', `/v1.41/containers/prune?filters=${filters({ label: [mark], until: [String(before)] })}`);
        expect(json(none.body)).toEqual({ ContainersDeleted: null, SpaceReclaimed: 0 });
        const pruned = await socketRequest(e.socket, 'POST', `/v1.41/containers/prune?filters=${filters({ label: [mark] })}`);
        expect(pruned.status).toBe(200);
        const body = json(pruned.body);
        expect([...body.ContainersDeleted].sort()).toEqual([created, exited].sort());
        expect(body.SpaceReclaimed).toBe(2); // "x\n" in /file
        const left = (await docker(e.socket, ['ps', '-a', '-q', '--no-trunc', '--filter', `label=${mark}`])).stdout.trim().split('\n').sort();
        expect(left).toEqual([running]);
        expect((await docker(e.socket, ['inspect', '-f', '{{.Id}}', other])).stdout.trim()).toBe(other);
      } finally {
        await docker(e.socket, ['rm', '-f', created, exited, running, other]);
      }
    });
  });

  describeWithPeers(`docker logs gives one frame per line where the container wrote a few at once (${label})`, peers, () => {
    test('printf of three lines, read after the exit and followed live, with and without timestamps', async () => {
      const e = await open();
      const id = (await docker(e.socket, ['run', '-d', ...e.run, e.image, 'sh', '-c', 'printf "a\\nb\\nc\\n"; sleep 2; printf "d\\ne\\n"'])).stdout.trim();
      try {
        await new Promise((r) => setTimeout(r, 500));
        const frames = async (query: string): Promise<string[]> => new FrameDecoder()
          .push((await socketRequest(e.socket, 'GET', `/v1.41/containers/${id}/logs?stdout=1&stderr=1${query}`)).body)
          .map((f) => f.payload.toString());
        expect(await frames('')).toEqual(['a\n', 'b\n', 'c\n']);
        const followed = await frames('&follow=1');
        expect(followed).toEqual(['a\n', 'b\n', 'c\n', 'd\n', 'e\n']);
        const stamped = await frames('&timestamps=1');
        expect(stamped.map((l) => l.replace(/^\S+ /, ''))).toEqual(['a\n', 'b\n', 'c\n', 'd\n', 'e\n']);
      } finally {
        await docker(e.socket, ['rm', '-f', id]);
      }
    });
  });
}

describeWithPeers('stats of a sandbox container on its own network include networks, per interface, from its namespace', [program(CLI), bwrap], () => {
  test('one entry per interface of its namespace but lo, dockerd\'s eight counters, traffic counted on eth0; none without a network of its own (as dockerd)', async () => {
    const e = await engines[0]![2]();
    const id = (await docker(e.socket, ['run', '-d', e.image, 'sleep', '60'])).stdout.trim();
    const isolated = (await docker(e.socket, ['run', '-d', '--network', 'none', e.image, 'sleep', '60'])).stdout.trim();
    try {
      // Some traffic: DNS queries to slirp4netns's forwarder (answered or not, they leave eth0).
      await docker(e.socket, ['exec', id, 'nslookup', 'dockgate.invalid', '10.0.2.3']);
      const stats = json((await socketRequest(e.socket, 'GET', `/v1.41/containers/${id}/stats?stream=0&one-shot=1`)).body);
      // Every interface of its namespace but lo: eth0 (its own slirp4netns stack), and eth1 where
      // the shared default bridge is made (root with iproute2).
      const interfaces = (await docker(e.socket, ['exec', id, 'cat', '/proc/net/dev'])).stdout.split('\n').slice(2)
        .map((l) => l.split(':')[0]!.trim()).filter((n) => n !== '' && n !== 'lo');
      expect(interfaces).toContain('eth0');
      expect(Object.keys(stats.networks).sort()).toEqual(interfaces.sort());
      expect(Object.keys(stats.networks.eth0)).toEqual(['rx_bytes', 'rx_packets', 'rx_errors', 'rx_dropped', 'tx_bytes', 'tx_packets', 'tx_errors', 'tx_dropped']);
      expect(stats.networks.eth0.tx_packets).toBeGreaterThan(0);
      expect(stats.networks.eth0.tx_bytes).toBeGreaterThan(0);
      // The same counters the container itself reads (never fewer packets than stats saw).
      const inside = (await docker(e.socket, ['exec', id, 'cat', '/proc/net/dev'])).stdout;
      const eth0 = inside.split('\n').find((l) => l.trim().startsWith('eth0:'))!.split(':')[1]!.trim().split(/\s+/).map(Number);
      expect(eth0[9]).toBeGreaterThanOrEqual(stats.networks.eth0.tx_packets);
      expect(Object.keys(stats).slice(-3)).toEqual(['name', 'id', 'networks']);
      const alone = json((await socketRequest(e.socket, 'GET', `/v1.41/containers/${isolated}/stats?stream=0&one-shot=1`)).body);
      expect(alone).not.toHaveProperty('networks');
    } finally {
      await docker(e.socket, ['rm', '-f', id, isolated]);
    }
  });
});
