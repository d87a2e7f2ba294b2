/**
 * Docker CLI 28 healthchecks and restart policies through dockgate, on the sandbox runtime and
 * on dockerd behind the Docker runtime (the reference: the same commands, the same answers).
 */
import { test, expect, afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import { dockerAt } from '../support/docker-cli.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-lifecycle-'));
afterAll(() => rmSync(configDir, { recursive: true, force: true }));
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasBwrap };

const docker = dockerAt(configDir);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const runtimes: [string, () => ContainerRuntime, string, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), 'busybox', [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
];

for (const [label, make, image, peers] of runtimes) {
  describeWithPeers(`Docker CLI 28 healthchecks and restart policies through dockgate (API 1.41, ${label})`, [program(CLI), ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, '1.12-1.41');
    const stamp = `${process.pid}-${Date.now()}`;
    const names: string[] = [];
    const cli = async (...args: string[]) => docker((await listening).socket, args);
    const named = (what: string): string => {
      names.push(`dg-life-${what}-${stamp}`);
      return names.at(-1)!;
    };
    async function until(name: string, format: string, want: string, ms = 15_000): Promise<string> {
      const end = Date.now() + ms;
      let got = '';
      while (Date.now() < end) {
        got = (await cli('inspect', '-f', format, name)).stdout.trim();
        if (got === want) break;
        await sleep(200);
      }
      return got;
    }
    afterAll(async () => {
      await cli('rm', '-f', ...names);
      await (await listening).close();
      await runtime.close?.();
    });

    test('--health-cmd with --health-interval 1s: healthy, shown by docker ps and its health filter; unhealthy once the file is removed', async () => {
      const name = named('health');
      const r = await cli('run', '-d', '--name', name, '--health-cmd', 'test -e /ready', '--health-interval', '1s', '--health-retries', '1', image, 'sh', '-c', 'touch /ready; sleep 120');
      expect(r.code).toBe(0);
      expect(await until(name, '{{.State.Health.Status}}', 'healthy')).toBe('healthy');
      const ps = await cli('ps', '--filter', 'health=healthy', '--filter', `name=${name}`, '--format', '{{.Names}} {{.Status}}');
      expect(ps.stdout).toMatch(new RegExp(`^${name} Up .* \\(healthy\\)\\n$`));
      // busybox:local has no rm on PATH; its sh runs the applet.
      expect((await cli('exec', name, 'sh', '-c', 'rm /ready')).code).toBe(0);
      expect(await until(name, '{{.State.Health.Status}}', 'unhealthy')).toBe('unhealthy');
      expect(Number((await cli('inspect', '-f', '{{.State.Health.FailingStreak}}', name)).stdout)).toBeGreaterThanOrEqual(1);
    });
    test('--health-interval below 1ms is refused with dockerd\'s message', async () => {
      const r = await cli('create', '--health-cmd', 'true', '--health-interval', '1us', image, 'true');
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Interval in Healthcheck cannot be less than 1ms');
    });
    test('--restart on-failure:2 on a container exiting 1: two restarts, RestartCount 2, then exited', async () => {
      const name = named('onfailure');
      expect((await cli('run', '-d', '--name', name, '--restart', 'on-failure:2', image, 'sh', '-c', 'exit 1')).code).toBe(0);
      expect(await until(name, '{{.RestartCount}} {{.State.Status}}', '2 exited')).toBe('2 exited');
      await sleep(1000);
      expect((await cli('inspect', '-f', '{{.RestartCount}} {{.State.Status}} {{.State.ExitCode}}', name)).stdout).toBe('2 exited 1\n');
    });
    test('--restart always brings a crashed container back; docker stop keeps it stopped', async () => {
      const name = named('always');
      expect((await cli('run', '-d', '--name', name, '--restart', 'always', image, 'sh', '-c', 'test -e /crashed || { touch /crashed; exit 3; }; sleep 120')).code).toBe(0);
      expect(await until(name, '{{.RestartCount}} {{.State.Status}}', '1 running')).toBe('1 running');
      expect((await cli('stop', '-t', '1', name)).code).toBe(0);
      await sleep(1000);
      expect((await cli('inspect', '-f', '{{.State.Status}} {{.RestartCount}}', name)).stdout).toBe('exited 1\n');
    });
    test('invalid policies are refused in dockerd\'s words (exit 125)', async () => {
      const bogus = await cli('run', '--restart', 'bogus', image, 'true');
      expect(bogus.code).toBe(125);
      expect(bogus.stderr).toContain("invalid restart policy 'bogus'");
      const counted = await cli('run', '--restart', 'always:3', image, 'true');
      expect(counted.code).toBe(125);
      expect(counted.stderr).toContain("maximum retry count cannot be used with restart policy 'always'");
    });
    test('docker update --restart changes the policy inspect shows', async () => {
      const name = named('update');
      expect((await cli('run', '-d', '--name', name, image, 'sleep', '120')).code).toBe(0);
      expect((await cli('update', '--restart', 'unless-stopped', name)).code).toBe(0);
      expect((await cli('inspect', '-f', '{{.HostConfig.RestartPolicy.Name}}', name)).stdout).toBe('unless-stopped\n');
    });
  });
}
