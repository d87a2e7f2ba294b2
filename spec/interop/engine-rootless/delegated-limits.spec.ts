/**
 * A rootless server enforces the limits whose cgroups an administrator delegated to its user
 * with the one command `dockgate rootless-cgroups` prints (cgroup v1: the "dockgate" groups under
 * the server's own, made and given to the user). The demo runs as an ordinary user
 * (spec/interop/support/rootless-demo.ts), driven by Docker CLI 28; this spec, as root, plays the
 * administrator, and gives the groups back to root afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { idsOf, rootlessPeers, ROOTLESS_USER, startRootlessDemo, type RootlessDemo } from '../support/rootless-demo.js';

const ids = idsOf(ROOTLESS_USER);
const CLI_MAIN = join(process.cwd(), 'dist/cli/main.js');
const memoryV1: PeerCheck = { name: 'a cgroup v1 memory controller (/sys/fs/cgroup/memory)', available: () => existsSync('/sys/fs/cgroup/memory/memory.limit_in_bytes') || existsSync('/sys/fs/cgroup/memory') };
const cli: PeerCheck = { name: 'dist/cli/main.js (npm run build)', available: () => existsSync(CLI_MAIN) };

describeWithPeers(`limits are enforced by a rootless server once their cgroups are delegated: the demo as ${ROOTLESS_USER}`, [...rootlessPeers(ids), memoryV1, cli], () => {
  let server: RootlessDemo;
  let groups: string[] = [];

  beforeAll(async () => {
    // What the administrator runs once: the command the CLI prints for the user (from this process's groups, the demo's too).
    const command = execFileSync(process.execPath, [CLI_MAIN, 'rootless-cgroups', '--user', ROOTLESS_USER], { encoding: 'utf8' }).trim();
    expect(command).toMatch(new RegExp(`^sudo sh -c 'mkdir -p .+ && chown -R ${ROOTLESS_USER} .+'$`));
    groups = /mkdir -p (.*?) &&/.exec(command)![1]!.split(' ');
    expect(spawnSync('sh', ['-c', command.replace(/^sudo /, '')]).status).toBe(0);
    server = await startRootlessDemo(ids!);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    if (groups.length > 0) spawnSync('chown', ['-R', 'root', ...groups]);
  });

  describe('at start the server says it enforces --memory', () => {
    test('the notice no longer lists --memory among the refused limits', () => {
      expect(server.output()).not.toMatch(/refused by name: [^\n]*--memory/);
    });
  });

  describe('--memory is enforced: a container that needs more than its limit is killed, one under it runs', () => {
    test('a shell holding 64 MiB dies (137) under --memory 16m and lives without it', async () => {
      const hog = ['busybox', 'sh', '-c', 'x=$(head -c 67108864 /dev/zero | tr "\\0" a); echo survived ${#x}'];
      const limited = await server.docker(['run', '--rm', '--memory', '16m', ...hog], 60_000);
      expect([limited.code, limited.stdout]).toEqual([137, '']);
      const free = await server.docker(['run', '--rm', ...hog], 60_000);
      expect([free.code, free.stdout]).toEqual([0, 'survived 67108864\n']);
    }, 120_000);
    test('docker inspect shows the limit as asked', async () => {
      const created = await server.docker(['create', '--memory', '16m', 'busybox', 'true']);
      expect(created.code).toBe(0);
      const id = created.stdout.trim();
      expect((await server.docker(['inspect', '-f', '{{.HostConfig.Memory}}', id])).stdout).toBe(`${16 * 1024 * 1024}\n`);
      await server.docker(['rm', id]);
    });
  });
});
