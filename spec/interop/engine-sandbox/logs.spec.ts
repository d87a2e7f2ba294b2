import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { lazySocket, listenOnSocket, socketRequest } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const DOCKERD_IMAGE = 'busybox:local';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const built: PeerCheck = { name: 'dist/ (npm run build)', available: () => existsSync(new URL('../../../dist/engine/index.js', import.meta.url)) };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));
const json = (b: Buffer): any => JSON.parse(b.toString());

function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    execFile(CLI, args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Milliseconds since the epoch of an RFC 3339 time with up to nanoseconds, without losing the fraction. */
function rfc3339Ms(text: string): number {
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(text);
  if (!m) throw new Error(`not an RFC 3339 UTC time: ${text}`);
  return Date.parse(`${m[1]}Z`) + Number(`0.${m[2] ?? '0'}`) * 1000;
}

/** The `--since`/`--until` form the CLI passes as is: seconds.nanoseconds. */
const unixArg = (ms: number): string => `${Math.floor(ms / 1000)}.${String(Math.round((ms % 1000) * 1e6)).padStart(9, '0')}`;

/** Starts the small host app on `stateDir`; resolves once it listens. */
async function hostApp(stateDir: string): Promise<{ child: ChildProcess; socket: string }> {
  const socket = join(mkdtempSync(join(tmpdir(), 'dockgate-host-')), 'engine.sock');
  const child = spawn(process.execPath, [new URL('../fixtures/sandbox-host.mjs', import.meta.url).pathname, stateDir, socket], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`host app exited (${code})`)));
  });
  return { child, socket };
}

describeWithPeers('a crash of the server (SIGKILL) loses at most the last second of a container\'s output', [bwrap, built, program(CLI)], () => {
  test('a line every 50 ms: after the kill and a new start, docker logs has every line up to one second before the kill, the container exited', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-crash-logs-'));
    const first = await hostApp(stateDir);
    const created = await socketRequest(first.socket, 'POST', '/v1.28/containers/create', {
      Image: 'busybox', Cmd: ['sh', '-c', 'i=0; while true; do echo line $i; i=$((i+1)); usleep 50000; done'],
    });
    const id = json(created.body).Id as string;
    expect((await socketRequest(first.socket, 'POST', `/v1.28/containers/${id}/start`)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 2000));
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    const second = await hostApp(stateDir);
    try {
      const state = json((await socketRequest(second.socket, 'GET', `/v1.28/containers/${id}/json`)).body).State;
      expect(state).toMatchObject({ Status: 'exited', ExitCode: 255 });
      // What the user types: `docker logs -t`, through the CLI.
      const logs = await docker(second.socket, ['logs', '-t', id]);
      expect(logs.code).toBe(0);
      const lines = logs.stdout.trim().split('\n');
      const parsed = lines.map((l) => {
        const [time, , n] = l.split(' ');
        return { time: rfc3339Ms(time!), n: Number(n) };
      });
      expect(parsed.map((p) => p.n)).toEqual(parsed.map((_, i) => i));
      expect(parsed[parsed.length - 1]!.time).toBeGreaterThanOrEqual(killedAt - 1000);
      expect(parsed.length).toBeGreaterThan(15);
      // Started again, it appends to the same log.
      expect((await socketRequest(second.socket, 'DELETE', `/v1.28/containers/${id}?force=1`)).status).toBe(204);
    } finally {
      second.child.kill('SIGTERM');
    }
  });
});

// The same container, the same CLI, dockerd's answers as the reference.
const engines: [string, () => Promise<{ socket: string; image: string; extra: string[]; close: () => Promise<void> }>][] = [
  ['the sandbox runtime', async () => {
    const runtime = sandboxRuntime();
    // API 1.41 as dockerd here: --until needs 1.35.
    const listening = await listenOnSocket(runtime, { min: '1.12', max: '1.41' });
    return { socket: listening.socket, image: 'busybox', extra: [], close: async () => { await listening.close(); await runtime.close?.(); } };
  }],
  ['dockerd (reference)', async () => ({ socket: '/var/run/docker.sock', image: DOCKERD_IMAGE, extra: ['--network', 'none'], close: async () => undefined })],
];

for (const [label, open] of engines) {
  const peers = label.startsWith('dockerd') ? [program(CLI), dockerd(), dockerImage(DOCKERD_IMAGE)] : [program(CLI), bwrap];
  describeWithPeers(`docker logs --since, --until, --tail and -t (${label})`, peers, () => {
    // Opened by the first test that runs (a filtered run leaves it closed, and its afterAll does not run).
    let engine: ReturnType<typeof open> | undefined;
    const opened = (): ReturnType<typeof open> => (engine ??= open());
    const made: string[] = [];
    afterAll(async () => {
      const e = await engine;
      if (!e) return;
      for (const id of made) await docker(e.socket, ['rm', '-f', id]);
      await e.close();
    });
    // Containers stay running while they are read: other suites prune stopped containers on dockerd.
    const untilLogged = async (socket: string, id: string, last: string, args: string[] = []): Promise<string> => {
      for (let i = 0; i < 100; i++) {
        const out = (await docker(socket, ['logs', ...args, id])).stdout;
        if (out.trimEnd().endsWith(last)) return out;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`${id} never logged ${last}`);
    };
    const threeLines = async (): Promise<{ socket: string; id: string; times: number[] }> => {
      const e = await opened();
      const run = await docker(e.socket, ['run', '-d', ...e.extra, e.image, 'sh', '-c', 'echo a; usleep 300000; echo b; usleep 300000; echo c; sleep 60']);
      const id = run.stdout.trim();
      made.push(id);
      const lines = (await untilLogged(e.socket, id, ' c', ['-t'])).trim().split('\n');
      expect(lines.map((l) => l.split(' ')[1])).toEqual(['a', 'b', 'c']);
      for (const l of lines) expect(l.split(' ')[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
      return { socket: e.socket, id, times: lines.map((l) => rfc3339Ms(l.split(' ')[0]!)) };
    };

    test('--tail 2 gives the last two lines; --tail 0 none; -t --tail 1 the last with its time', async () => {
      const { socket, id } = await threeLines();
      expect((await docker(socket, ['logs', '--tail', '2', id])).stdout).toBe('b\nc\n');
      expect((await docker(socket, ['logs', '--tail', '0', id])).stdout).toBe('');
      expect((await docker(socket, ['logs', '-t', '--tail', '1', id])).stdout).toMatch(/^\S+Z c\n$/);
    });
    test('--since and --until select lines by their time', async () => {
      const { socket, id, times } = await threeLines();
      const [ta, tb, tc] = times as [number, number, number];
      expect((await docker(socket, ['logs', '--since', unixArg((ta + tb) / 2), id])).stdout).toBe('b\nc\n');
      expect((await docker(socket, ['logs', '--until', unixArg((tb + tc) / 2), id])).stdout).toBe('a\nb\n');
      expect((await docker(socket, ['logs', '--since', unixArg((ta + tb) / 2), '--until', unixArg((tb + tc) / 2), id])).stdout).toBe('b\n');
    });
    test('--log-driver none: docker run still shows the output; docker logs is dockerd\'s "does not support reading"', async () => {
      const e = await opened();
      const run = await docker(e.socket, ['run', '--rm', '--log-driver', 'none', ...e.extra, e.image, 'echo', 'hi']);
      expect(run).toMatchObject({ code: 0, stdout: 'hi\n' });
      const id = (await docker(e.socket, ['run', '-d', '--log-driver', 'none', ...e.extra, e.image, 'sleep', '60'])).stdout.trim();
      made.push(id);
      const logs = await docker(e.socket, ['logs', id]);
      expect(logs.code).toBe(1);
      expect(logs.stderr).toContain('configured logging driver does not support reading');
    });
    test('an unknown driver and an unknown option are refused at create in dockerd\'s words', async () => {
      const e = await opened();
      const bogus = await docker(e.socket, ['create', '--log-driver', 'bogus', ...e.extra, e.image, 'true']);
      expect(bogus.code).not.toBe(0);
      expect(bogus.stderr).toContain('error looking up logging plugin bogus: plugin "bogus" not found');
      const opt = await docker(e.socket, ['create', '--log-opt', 'foo=bar', ...e.extra, e.image, 'true']);
      expect(opt.code).not.toBe(0);
      expect(opt.stderr).toContain("unknown log opt 'foo' for json-file log driver");
    }, 60_000); // dockerd looks a plugin up for 15 s before it says it is not found
    test('max-size and max-file are kept and shown by inspect; logs of a rotated log end with the last line', async () => {
      const e = await opened();
      const run = await docker(e.socket, ['run', '-d', '--log-opt', 'max-size=1k', '--log-opt', 'max-file=2', ...e.extra, e.image,
        'sh', '-c', 'i=0; while [ $i -lt 300 ]; do echo line $i; i=$((i+1)); done; sleep 60']);
      const id = run.stdout.trim();
      made.push(id);
      await untilLogged(e.socket, id, 'line 299');
      const config = JSON.parse((await docker(e.socket, ['inspect', '-f', '{{json .HostConfig.LogConfig}}', id])).stdout);
      expect(config).toMatchObject({ Type: 'json-file', Config: { 'max-size': '1k', 'max-file': '2' } });
      const lines = (await docker(e.socket, ['logs', id])).stdout.trim().split('\n');
      expect(lines[lines.length - 1]).toBe('line 299');
      expect(lines.length).toBeLessThan(300);
      const numbers = lines.map((l) => Number(l.split(' ')[1]));
      expect(numbers).toEqual(numbers.map((_, i) => numbers[0]! + i));
    });
  });
}

describeWithPeers('the sandbox keeps logs in rotated files; LogConfig local is an alias, other drivers are refused by name', [program(CLI), bwrap], () => {
  const served = lazySocket(() => sandboxRuntime());
  afterAll(() => served.close());
  const socket = served.socket;

  test('max-file=2, max-size=1k: at most 2 files of about 1 KiB in the LogPath directory', async () => {
    const s = await socket();
    const id = (await docker(s, ['run', '-d', '--log-opt', 'max-size=1k', '--log-opt', 'max-file=2', 'busybox',
      'sh', '-c', 'i=0; while [ $i -lt 500 ]; do echo line $i; i=$((i+1)); done'])).stdout.trim();
    await docker(s, ['wait', id]);
    const logPath = (await docker(s, ['inspect', '-f', '{{.LogPath}}', id])).stdout.trim();
    const files = readdirSync(dirname(logPath));
    expect(files.length).toBeLessThanOrEqual(2);
    // A file ends at the first record past max-size; records are at most max-size/8 (128 bytes at least) long.
    for (const f of files) expect(statSync(join(dirname(logPath), f)).size).toBeLessThanOrEqual(1024 + 128 + 20);
    await docker(s, ['rm', id]);
  });
  test('without LogConfig, inspect shows json-file with no option (what was asked, as dockerd); the bounded default rotation applies unseen', async () => {
    const s = await socket();
    const id = (await docker(s, ['create', 'busybox', 'true'])).stdout.trim();
    const config = JSON.parse((await docker(s, ['inspect', '-f', '{{json .HostConfig.LogConfig}}', id])).stdout);
    expect(config).toEqual({ Type: 'json-file', Config: {} });
    await docker(s, ['rm', id]);
  });
  test('--log-driver local works as json-file does and inspect says local', async () => {
    const s = await socket();
    const run = await docker(s, ['run', '--name', 'dg-local-driver', '--log-driver', 'local', '--log-opt', 'max-size=1m', 'busybox', 'echo', 'kept']);
    expect(run.stdout).toBe('kept\n');
    expect((await docker(s, ['logs', 'dg-local-driver'])).stdout).toBe('kept\n');
    expect(JSON.parse((await docker(s, ['inspect', '-f', '{{json .HostConfig.LogConfig}}', 'dg-local-driver'])).stdout))
      .toEqual({ Type: 'local', Config: { 'max-size': '1m' } });
    await docker(s, ['rm', 'dg-local-driver']);
  });
  test('syslog (which dockerd has) is refused naming the driver; compress is refused naming the option; a bad max-size at create', async () => {
    const s = await socket();
    const syslog = await docker(s, ['create', '--log-driver', 'syslog', 'busybox', 'true']);
    expect(syslog.code).not.toBe(0);
    expect(syslog.stderr).toContain('HostConfig.LogConfig.Type "syslog" is not supported by the sandbox runtime (json-file, local or none)');
    const compress = await docker(s, ['create', '--log-opt', 'compress=true', 'busybox', 'true']);
    expect(compress.stderr).toContain("log opt 'compress' is not supported by the sandbox runtime");
    const size = await docker(s, ['create', '--log-opt', 'max-size=abc', 'busybox', 'true']);
    expect(size.stderr).toContain("failed to initialize logging driver: invalid size: 'abc'");
  });
  test('docker logs -f of a container printing a counter: no gap and no duplicate where the files end and the live output begins', async () => {
    const s = await socket();
    const created = await socketRequest(s, 'POST', '/v1.28/containers/create', {
      Image: 'busybox',
      Cmd: ['sh', '-c', 'i=0; while [ $i -lt 4000 ]; do echo $i; i=$((i+1)); [ $((i % 200)) = 0 ] && usleep 30000; done; true'],
      HostConfig: { LogConfig: { Type: 'json-file', Config: { 'max-size': '8k', 'max-file': '3' } } },
    });
    const id = json(created.body).Id as string;
    await socketRequest(s, 'POST', `/v1.28/containers/${id}/start`);
    await new Promise((r) => setTimeout(r, 200));
    const followed = await socketRequest(s, 'GET', `/v1.28/containers/${id}/logs?stdout=1&stderr=1&follow=1`);
    const seen = new FrameDecoder().push(followed.body).map((f) => f.payload.toString()).join('').trim().split('\n').map(Number);
    expect(seen[seen.length - 1]).toBe(3999);
    expect(seen).toEqual(seen.map((_, i) => seen[0]! + i));
    await socketRequest(s, 'DELETE', `/v1.28/containers/${id}?force=1`);
  });
});
