import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import { dockerAt } from '../support/docker-cli.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const RANGE = '1.12-1.41';
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-ops-'));
afterAll(() => rmSync(configDir, { recursive: true, force: true }));
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasBwrap };

/** Runs the Docker CLI against `socket`, feeding `input` to its stdin. */
const docker = dockerAt(configDir);

const runtimes: [string, () => ContainerRuntime, string, PeerCheck[]][] = [
  ['sandbox runtime (the demo default)', () => sandboxRuntime(), 'busybox', [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
];

for (const [label, make, image, peers] of runtimes) {
  describeWithPeers(`Docker CLI 28 exec, top, stats, pause, restart, rename, cp and prune through dockgate (API 1.41, ${label})`, [program(CLI), ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, RANGE);
    const name = `dg-ops-${process.pid}-${Date.now()}`;
    const cli = async (args: string[], input?: string) => docker((await listening).socket, args, input);
    afterAll(async () => {
      await cli(['rm', '-f', name, `${name}-renamed`]);
      await (await listening).close();
      await runtime.close?.();
    });

    test('docker run -d starts the long-running container the other commands use', async () => {
      const r = await cli(['run', '-d', '--name', name, '--hostname', 'dg-ops-host', image, 'sleep', '300']);
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    });
    test('docker exec prints the command output; its exit code is the command\'s', async () => {
      expect(await cli(['exec', name, 'echo', 'from exec'])).toMatchObject({ code: 0, stdout: 'from exec\n' });
      expect((await cli(['exec', name, 'sh', '-c', 'echo oops >&2; exit 3'])).code).toBe(3);
    });
    test('docker exec -w sets the working directory (API 1.35), -e adds to the environment', async () => {
      expect((await cli(['exec', '-w', '/bin', name, 'sh', '-c', 'echo $PWD'])).stdout).toBe('/bin\n');
      expect((await cli(['exec', '-e', 'GREETING=hello', name, 'sh', '-c', 'echo $GREETING'])).stdout).toBe('hello\n');
    });
    test('docker exec -i passes stdin through the hijacked connection', async () => {
      expect((await cli(['exec', '-i', name, 'cat'], 'piped in\n')).stdout).toBe('piped in\n');
    });
    test('the exec runs inside the container: same hostname and PID namespace', async () => {
      expect((await cli(['exec', name, 'busybox', 'hostname'])).stdout).toBe('dg-ops-host\n');
      expect((await cli(['exec', name, 'busybox', 'pidof', 'sleep'])).stdout.trim()).toMatch(/^\d+$/);
    });
    test('docker exec as root has the container\'s capability set: dockerd\'s default, none after --cap-drop ALL', async () => {
      expect((await cli(['exec', name, 'cat', '/proc/self/status'])).stdout).toMatch(/^CapEff:\s+00000000a80425fb$/m);
      const dropped = `${name}-nocaps`;
      expect((await cli(['run', '-d', '--name', dropped, '--cap-drop', 'ALL', image, 'sleep', '300'])).code).toBe(0);
      expect((await cli(['exec', dropped, 'cat', '/proc/self/status'])).stdout).toMatch(/^CapEff:\s+0000000000000000$/m);
      await cli(['rm', '-f', dropped]);
    });
    test('docker exec -it runs the command on a terminal (the CLI inside util-linux script for a pty of its own)', async () => {
      const { socket } = await listening;
      const line = `${CLI} exec -it ${name} sh -c 'test -t 0 && test -t 1 && echo on-a-tty'`;
      const r = await new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile('script', ['-qec', line, '/dev/null'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir }, timeout: 30_000 }, (error, stdout) => resolve({ code: error ? 1 : 0, stdout }));
      });
      expect(r.code).toBe(0);
      // A TTY's output is raw, with the terminal's CRLF line ends.
      expect(r.stdout).toContain('on-a-tty\r\n');
    });
    test('docker exec -u 1000 runs as that uid', async () => {
      expect((await cli(['exec', '-u', '1000', name, 'busybox', 'id', '-u'])).stdout).toBe('1000\n');
    });
    test('docker top lists the container\'s processes', async () => {
      const r = await cli(['top', name]);
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n')[0]).toMatch(/UID\s+PID\s+PPID/);
      expect(r.stdout).toContain('sleep 300');
    });
    test('docker stats --no-stream prints a row for the container', async () => {
      const r = await cli(['stats', '--no-stream', '--format', '{{.Name}}|{{.PIDs}}', name]);
      expect(r.stderr).toBe('');
      const [row, pids] = r.stdout.trim().split('|');
      expect(row).toBe(name);
      expect(Number(pids)).toBeGreaterThanOrEqual(1);
    });
    test('docker pause freezes it (status paused, exec refused), unpause thaws it', async () => {
      expect((await cli(['pause', name])).code).toBe(0);
      expect((await cli(['inspect', '-f', '{{.State.Status}}', name])).stdout).toBe('paused\n');
      const exec = await cli(['exec', name, 'true']);
      expect(exec.code).not.toBe(0);
      expect(exec.stderr).toContain('is paused, unpause the container before exec');
      expect((await cli(['pause', name])).stderr).toContain('is already paused');
      expect((await cli(['unpause', name])).code).toBe(0);
      expect((await cli(['inspect', '-f', '{{.State.Status}}', name])).stdout).toBe('running\n');
      expect((await cli(['exec', name, 'echo', 'thawed'])).stdout).toBe('thawed\n');
    });
    test('docker cp copies a file into the container and back out', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dockgate-cp-'));
      writeFileSync(join(dir, 'in.txt'), 'copied in\n');
      expect(await cli(['cp', join(dir, 'in.txt'), `${name}:/in.txt`])).toMatchObject({ code: 0, stderr: '' });
      expect((await cli(['exec', name, 'cat', '/in.txt'])).stdout).toBe('copied in\n');
      expect((await cli(['exec', name, 'sh', '-c', 'echo made inside > /out.txt'])).code).toBe(0);
      expect(await cli(['cp', `${name}:/out.txt`, join(dir, 'out.txt')])).toMatchObject({ code: 0, stderr: '' });
      expect(readFileSync(join(dir, 'out.txt'), 'utf8')).toBe('made inside\n');
      const missing = await cli(['cp', `${name}:/no/such/file`, dir]);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('Could not find the file /no/such/file');
      rmSync(dir, { recursive: true, force: true });
    });
    test('docker cp into a created (never started) container, then docker start -a sees the file; cp out of it once exited', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'dockgate-cp-created-'));
      writeFileSync(join(dir, 'before-start.txt'), 'there before start\n');
      const created = (await cli(['create', image, 'sh', '-c', 'cat /before-start.txt; echo written > /after.txt'])).stdout.trim();
      expect(await cli(['cp', join(dir, 'before-start.txt'), `${created}:/before-start.txt`])).toMatchObject({ code: 0, stderr: '' });
      expect(await cli(['start', '-a', created])).toMatchObject({ code: 0, stdout: 'there before start\n' });
      expect(await cli(['cp', `${created}:/after.txt`, join(dir, 'after.txt')])).toMatchObject({ code: 0, stderr: '' });
      expect(readFileSync(join(dir, 'after.txt'), 'utf8')).toBe('written\n');
      await cli(['rm', created]);
      rmSync(dir, { recursive: true, force: true });
    });
    test('docker diff lists what changed in the container\'s filesystem', async () => {
      expect((await cli(['exec', name, 'sh', '-c', 'echo > /made-by-exec'])).code).toBe(0);
      const r = await cli(['diff', name]);
      expect(r.code).toBe(0);
      expect(r.stdout.split('\n')).toContain('A /made-by-exec');
    });
    // Renamed before the restart: dockerd 20.10 with --bridge=none fails a rename after a restart ("sandbox … not found").
    test('docker rename gives it a new name; the old one is gone', async () => {
      expect(await cli(['rename', name, `${name}-renamed`])).toMatchObject({ code: 0, stderr: '' });
      expect((await cli(['inspect', '-f', '{{.Name}}', `${name}-renamed`])).stdout).toBe(`/${name}-renamed\n`);
      expect((await cli(['inspect', name])).code).not.toBe(0);
    });
    test('docker restart -t 1 starts it again', async () => {
      const before = (await cli(['inspect', '-f', '{{.State.StartedAt}}', `${name}-renamed`])).stdout;
      expect(await cli(['restart', '-t', '1', `${name}-renamed`])).toMatchObject({ code: 0, stdout: `${name}-renamed\n` });
      const after = await cli(['inspect', '-f', '{{.State.Status}} {{.State.StartedAt}}', `${name}-renamed`]);
      expect(after.stdout.startsWith('running ')).toBe(true);
      expect(after.stdout).not.toBe(`running ${before}`);
    });
    test('docker container prune --filter label removes only stopped containers with that label', async () => {
      const label = `dg-prune=${process.pid}-${Date.now()}`;
      const stopped = (await cli(['create', '--label', label, image, 'true'])).stdout.trim();
      const kept = (await cli(['create', image, 'true'])).stdout.trim();
      const r = await cli(['container', 'prune', '-f', '--filter', `label=${label}`]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Deleted Containers:\n${stopped}\n`);
      expect((await cli(['inspect', stopped])).code).not.toBe(0);
      expect((await cli(['inspect', '-f', '{{.Id}}', kept])).stdout.trim()).toBe(kept);
      await cli(['rm', kept]);
    });
  });
}
