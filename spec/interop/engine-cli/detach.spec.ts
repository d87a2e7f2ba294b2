/**
 * Docker CLI 28 detach keys under a real terminal (node-pty), through dockgate on the sandbox
 * runtime and on dockerd behind the Docker runtime: `ctrl-p ctrl-q` by default, `--detach-keys`,
 * and `detachKeys` in the CLI's config.json detach the client (run: exit 0; attach and exec: exit 1, "read escape sequence")
 * while the container keeps running.
 */
import { test, expect, afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import { dockerAt } from '../support/docker-cli.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const work = mkdtempSync(join(tmpdir(), 'dockgate-cli-detach-'));
const plainConfig = join(work, 'plain');
const keyedConfig = join(work, 'keyed');
for (const [dir, config] of [[plainConfig, {}], [keyedConfig, { detachKeys: 'ctrl-x,x' }]] as const) {
  spawnSync('mkdir', ['-p', dir]);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
}
afterAll(() => rmSync(work, { recursive: true, force: true }));
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasBwrap };

const docker = dockerAt(plainConfig, work);

/** The CLI in a terminal: type into it, wait for its output, wait for its exit (or time out). */
function terminal(socket: string, args: string[], configDir = plainConfig) {
  const term = spawnPty(CLI, args, { name: 'xterm', cols: 100, rows: 30, cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir } });
  let out = '';
  term.onData((d) => (out += d));
  const exit = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
  return {
    write: (s: string) => term.write(s),
    output: () => out,
    until: async (pattern: RegExp) => {
      for (let i = 0; i < 100 && !pattern.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(pattern);
    },
    exited: async (ms: number) => {
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<'hung'>((r) => {
        timer = setTimeout(() => {
          term.kill();
          r('hung');
        }, ms);
      });
      try {
        return await Promise.race([exit, hung]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

const runtimes: [string, () => ContainerRuntime, string, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), 'busybox', [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
];

for (const [label, make, image, peers] of runtimes) {
  describeWithPeers(`Docker CLI 28 detach keys through dockgate (API 1.41, ${label})`, [program(CLI), ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, '1.12-1.41');
    const stamp = `${process.pid}-${Date.now()}`;
    const names: string[] = [];
    const named = (what: string): string => {
      names.push(`dg-detach-${what}-${stamp}`);
      return names.at(-1)!;
    };
    afterAll(async () => {
      const { socket } = await listening;
      for (const n of names) await docker(socket, ['rm', '-f', n]);
      await (await listening).close();
      await runtime.close?.();
    });
    const running = async (name: string) => (await docker((await listening).socket, ['inspect', '-f', '{{.State.Running}}', name])).stdout.trim();

    test('docker run -it: ctrl-p ctrl-q detaches the client (exit 0) and the container keeps running', async () => {
      const name = named('run');
      const term = terminal((await listening).socket, ['run', '-it', '--name', name, image, 'sh']);
      await term.until(/\/ # /);
      term.write('echo ALIVE-$((6*7))\r');
      await term.until(/ALIVE-42/);
      term.write('\x10\x11');
      // The CLI's run ends quietly with 0 on a detach; attach and exec say so and exit 1 (as against dockerd itself).
      expect(await term.exited(8000)).toBe(0);
      expect(await running(name)).toBe('true');
    });
    test('docker attach with --detach-keys detaches on those keys; the container keeps running', async () => {
      const name = names[0]!;
      const term = terminal((await listening).socket, ['attach', '--detach-keys', 'ctrl-a,d', name]);
      await new Promise((r) => setTimeout(r, 500));
      term.write('echo AGAIN-$((7*7))\r');
      await term.until(/AGAIN-49/);
      term.write('\x01d');
      expect(await term.exited(8000)).toBe(1);
      expect(term.output()).toContain('read escape sequence');
      expect(await running(name)).toBe('true');
    });
    test('detachKeys in the CLI\'s config.json detach docker exec -it; the container keeps running', async () => {
      const name = names[0]!;
      const term = terminal((await listening).socket, ['exec', '-it', name, 'sh'], keyedConfig);
      await term.until(/\/ # /);
      term.write('echo EXEC-$((8*8))\r');
      await term.until(/EXEC-64/);
      term.write('\x18x');
      expect(await term.exited(8000)).toBe(1);
      expect(term.output()).toContain('read escape sequence');
      expect(await running(name)).toBe('true');
    });
  });
}
