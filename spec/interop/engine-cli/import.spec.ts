/**
 * Docker CLI 28 `docker import` through dockgate, on the sandbox runtime and on dockerd behind the
 * Docker runtime where it applies (the reference: the same commands, the same answers).
 */
import { test, expect, afterAll, beforeAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describeWithPeers, dockerd, program, type PeerCheck } from '../../support/peers.js';
import { dockerAt } from '../support/docker-cli.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const work = mkdtempSync(join(tmpdir(), 'dockgate-cli-import-'));
const configDir = join(work, 'config');
mkdirSync(configDir);
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasBwrap };

// A root filesystem of one static busybox and a data file, as a plain tar and gzipped.
const rootfs = join(work, 'rootfs');
let tarFile = '';
let gzFile = '';
let server: Server | undefined;
let url = '';
beforeAll(async () => {
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  mkdirSync(join(rootfs, 'data'));
  if (existsSync('/bin/busybox')) writeFileSync(join(rootfs, 'bin', 'busybox'), readFileSync('/bin/busybox'), { mode: 0o755 });
  writeFileSync(join(rootfs, 'data', 'f'), 'imported\n');
  tarFile = join(work, 'rootfs.tar');
  spawnSync('tar', ['-C', rootfs, '-cf', tarFile, '.']);
  gzFile = join(work, 'rootfs.tar.gz');
  writeFileSync(gzFile, gzipSync(readFileSync(tarFile)));
  server = createServer((req, res) => {
    if (req.url === '/rootfs.tar') res.end(readFileSync(tarFile));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rootfs.tar`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  rmSync(work, { recursive: true, force: true });
});

const cli = dockerAt(configDir);
/** The CLI with a file on its stdin (`docker import -`); a refused import exits while it is still written. */
const docker = (socket: string, args: string[], stdinFile?: string) => cli(socket, args, stdinFile ? readFileSync(stdinFile) : undefined);

const runtimes: [string, () => ContainerRuntime, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), [dockerd()]],
];

for (const [label, make, peers] of runtimes) {
  describeWithPeers(`Docker CLI 28 docker import through dockgate (API 1.41, ${label})`, [program(CLI), ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, '1.12-1.41');
    const stamp = `${process.pid}-${Date.now()}`;
    const repo = `dg-import-${stamp}`;
    const cli = async (args: string[], stdinFile?: string) => docker((await listening).socket, args, stdinFile);
    afterAll(async () => {
      await cli(['rm', '-f', `${repo}-run`]);
      for (const tag of ['plain', 'gz', 'url', 'bare']) await cli(['rmi', '-f', `${repo}:${tag}`]);
      await (await listening).close();
      await runtime.close?.();
    });

    test('docker import - with --change and --message makes a runnable image with that config, comment and an empty created_by', async () => {
      const imported = await cli(['import', '--message', 'from a spec', '--change', 'ENTRYPOINT ["/bin/busybox"]', '--change', 'CMD ["cat", "/data/f"]',
        '--change', 'ENV A=b', '--change', 'EXPOSE 80', '--change', 'LABEL purpose=spec', '--change', 'USER 0', '--change', 'WORKDIR /data', '--change', 'VOLUME /data',
        '-', `${repo}:plain`], tarFile);
      expect(imported.code).toBe(0);
      expect(imported.stdout).toMatch(/^sha256:[0-9a-f]{64}\n$/);
      const shown = await cli(['image', 'inspect', '-f', '{{.Id}}|{{.Comment}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}|{{json .Config.Env}}|{{json .Config.ExposedPorts}}|{{json .Config.Labels}}|{{.Config.User}}|{{.Config.WorkingDir}}|{{json .Config.Volumes}}', `${repo}:plain`]);
      expect(shown.stdout).toBe(`${imported.stdout.trim()}|from a spec|["/bin/busybox"]|["cat","/data/f"]|["A=b"]|{"80/tcp":{}}|{"purpose":"spec"}|0|/data|{"/data":{}}\n`);
      const history = await cli(['history', '--no-trunc', '--format', '{{.CreatedBy}}|{{.Comment}}', `${repo}:plain`]);
      expect(history.stdout).toBe('|from a spec\n');
      const run = await cli(['run', '--name', `${repo}-run`, `${repo}:plain`]);
      expect(run).toMatchObject({ code: 0, stdout: 'imported\n' });
      // The image's VOLUME became an anonymous volume filled with the image's /data.
      expect((await cli(['inspect', '-f', '{{range .Mounts}}{{.Type}} {{.Destination}}{{end}}', `${repo}-run`])).stdout).toBe('volume /data\n');
      expect((await cli(['rm', '-v', `${repo}-run`])).code).toBe(0);
    });
    test('a gzip tar imports as the same layer; without --message the comment is "Imported from -"', async () => {
      const imported = await cli(['import', '-', `${repo}:gz`], gzFile);
      expect(imported.code).toBe(0);
      expect((await cli(['image', 'inspect', '-f', '{{.Comment}} {{len .RootFS.Layers}}', `${repo}:gz`])).stdout).toBe('Imported from - 1\n');
    });
    test('docker import URL fetches the tar (http) and says "Imported from URL"', async () => {
      const imported = await cli(['import', url, `${repo}:url`]);
      expect(imported.code).toBe(0);
      expect(imported.stdout).toMatch(/sha256:[0-9a-f]{64}\n$/);
      expect((await cli(['image', 'inspect', '-f', '{{.Comment}}', `${repo}:url`])).stdout).toBe(`Imported from ${url}\n`);
    });
    test('a change that is not one of the ten is refused in dockerd\'s words, and no image is made', async () => {
      const refused = await cli(['import', '--change', 'RUN echo x', '-', `${repo}:bad`], tarFile);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('run is not a valid change command');
      expect((await cli(['image', 'inspect', `${repo}:bad`])).code).not.toBe(0);
    });
  });
}
