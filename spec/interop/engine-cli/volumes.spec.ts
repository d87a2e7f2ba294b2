/**
 * Docker CLI 28 named volumes (`-v name:/path`, `docker volume …`) through dockgate, on the sandbox runtime and
 * on dockerd behind the Docker runtime (the reference: the same commands, the same answers).
 */
import { test, expect, afterAll } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program, type PeerCheck } from '../../support/peers.js';
import { dockerAt } from '../support/docker-cli.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-volumes-'));
afterAll(() => rmSync(configDir, { recursive: true, force: true }));
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasBwrap };

const docker = dockerAt(configDir);

const runtimes: [string, () => ContainerRuntime, string, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), 'busybox', [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
];

for (const [label, make, image, peers] of runtimes) {
  describeWithPeers(`Docker CLI 28 named volumes through dockgate (API 1.41, ${label})`, [program(CLI), ...peers], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime, '1.12-1.41');
    const stamp = `${process.pid}-${Date.now()}`;
    const names: string[] = [];
    const cli = async (...args: string[]) => docker((await listening).socket, args);
    const volume = `dg-vols-v-${stamp}`;
    const sharers: string[] = [];
    const named = (what: string): string => {
      names.push(`dg-vols-${what}-${stamp}`);
      return names.at(-1)!;
    };
    afterAll(async () => {
      for (const n of names) await cli('rm', '-f', n);
      // Volumes a failed test left behind (named() gave their names too).
      for (const n of [volume, ...names]) await cli('volume', 'rm', '-f', n);
      await (await listening).close();
      await runtime.close?.();
    });

    test('docker volume create, ls and inspect show a local volume', async () => {
      expect(await cli('volume', 'create', '--label', 'purpose=spec', volume)).toMatchObject({ code: 0, stdout: `${volume}\n` });
      expect((await cli('volume', 'ls', '-q', '--filter', `name=${volume}`)).stdout).toBe(`${volume}\n`);
      expect((await cli('volume', 'inspect', '-f', '{{.Driver}} {{.Scope}} {{.Labels.purpose}}', volume)).stdout).toBe('local local spec\n');
    });
    test('two containers share the volume: one writes through -v, the other reads through --mount', async () => {
      const writer = named('writer');
      sharers.push(writer);
      expect((await cli('run', '--name', writer, '-v', `${volume}:/data`, image, 'sh', '-c', 'echo shared-data > /data/f')).code).toBe(0);
      const reader = named('reader');
      sharers.push(reader);
      expect(await cli('run', '--name', reader, '--mount', `type=volume,src=${volume},dst=/in,readonly`, image, 'cat', '/in/f')).toMatchObject({ code: 0, stdout: 'shared-data\n' });
      expect((await cli('inspect', '-f', '{{range .Mounts}}{{.Type}} {{.Name}} {{.Destination}} {{.RW}}{{end}}', writer)).stdout).toBe(`volume ${volume} /data true\n`);
      expect((await cli('inspect', '-f', '{{range .Mounts}}{{.Type}} {{.Name}} {{.Destination}} {{.RW}}{{end}}', reader)).stdout).toBe(`volume ${volume} /in false\n`);
    });
    test('-v /path makes an anonymous volume (64 hex name, listed, Mode "") that rm -v removes', async () => {
      const c = named('anon');
      expect((await cli('run', '-d', '--name', c, '-v', '/anon', image, 'sleep', '30')).code).toBe(0);
      const shown = (await cli('inspect', '-f', '{{range .Mounts}}{{.Type}} {{len .Name}} {{.Destination}} {{.Driver}} {{.RW}} "{{.Mode}}" {{.Propagation}}|{{end}}', c)).stdout;
      expect(shown).toBe('volume 64 /anon local true "" |\n');
      const name = (await cli('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', c)).stdout.trim();
      expect((await cli('volume', 'ls', '-q')).stdout.split('\n')).toContain(name);
      expect((await cli('rm', '-fv', c)).code).toBe(0);
      expect((await cli('volume', 'inspect', name)).stderr).toContain('no such volume');
    });
    test('--rm removes the anonymous volumes of the container once it is gone', async () => {
      const c = named('anon-rm');
      expect((await cli('run', '-d', '--rm', '--name', c, '-v', '/anon', image, 'sleep', '30')).code).toBe(0);
      const name = (await cli('inspect', '-f', '{{range .Mounts}}{{.Name}}{{end}}', c)).stdout.trim();
      expect(name).toMatch(/^[0-9a-f]{64}$/);
      expect((await cli('stop', '-t', '0', c)).code).toBe(0);
      let gone = false;
      for (let i = 0; i < 50 && !gone; i++) {
        gone = (await cli('volume', 'inspect', name)).code !== 0;
        if (!gone) await new Promise((r) => setTimeout(r, 100));
      }
      expect(gone).toBe(true);
    });
    test('an empty volume mounted on an image directory gets its content at the first mount; nocopy leaves it empty', async () => {
      const filled = named('filled');
      const empty = named('empty');
      expect((await cli('run', '--rm', '-v', `${filled}:/bin`, image, 'true')).code).toBe(0);
      expect((await cli('run', '--rm', '-v', `${filled}:/x`, image, 'ls', '/x')).stdout.split('\n')).toContain('busybox');
      // Without the copy the image's /bin is hidden: the command is not found, and the volume stays empty.
      await cli('run', '--rm', '-v', `${empty}:/bin:nocopy`, image, 'true');
      expect(await cli('run', '--rm', '-v', `${empty}:/x`, image, 'ls', '/x')).toMatchObject({ code: 0, stdout: '' });
      await cli('volume', 'rm', filled, empty);
    });
    test('--volumes-from NAME:ro mounts the other container\'s volumes read-only (Mode "", RW false)', async () => {
      const source = named('from-src');
      const share = named('from-vol');
      expect((await cli('run', '--name', source, '-v', '/anon', '-v', `${share}:/data`, image, 'sh', '-c', 'echo a > /anon/f; echo d > /data/f')).code).toBe(0);
      const reader = named('from-reader');
      const read = await cli('run', '--name', reader, '--volumes-from', `${source}:ro`, image, 'sh', '-c', 'cat /anon/f /data/f; touch /data/g');
      expect(read.stdout).toBe('a\nd\n');
      expect(read.stderr).toContain('Read-only file system');
      const shown = (await cli('inspect', '-f', '{{range .Mounts}}{{.Type}} {{.Destination}} {{.RW}} "{{.Mode}}"|{{end}}', reader)).stdout.trim().split('|').filter((m) => m !== '').sort();
      expect(shown).toEqual(['volume /anon false ""', 'volume /data false ""']);
      const unknown = await cli('create', '--volumes-from', `no-such-${stamp}`, image, 'true');
      expect(unknown.stderr).toContain(`No such container: no-such-${stamp}`);
      const badMode = await cli('create', '--volumes-from', `${source}:xx`, image, 'true');
      expect(badMode.stderr).toContain('invalid mode: xx');
      expect((await cli('rm', '-v', reader, source)).code).toBe(0);
      await cli('volume', 'rm', share);
    });
    test('docker cp and exec reach a volume: cp into a created container, cp out of and exec in a running one', async () => {
      const share = named('cp-vol');
      const c = named('cp-created');
      expect((await cli('create', '--name', c, '-v', `${share}:/data`, image, 'cat', '/data/in')).code).toBe(0);
      const file = join(configDir, 'in');
      writeFileSync(file, 'copied-in\n');
      expect(await cli('cp', file, `${c}:/data/in`)).toMatchObject({ code: 0 });
      expect(await cli('start', '-a', c)).toMatchObject({ code: 0, stdout: 'copied-in\n' });
      const r = named('cp-running');
      expect((await cli('run', '-d', '--name', r, '-v', `${share}:/v`, image, 'sh', '-c', 'echo out > /v/out; sleep 30')).code).toBe(0);
      await new Promise((res) => setTimeout(res, 500));
      const out = join(configDir, 'out');
      expect(await cli('cp', `${r}:/v/out`, out)).toMatchObject({ code: 0 });
      expect(readFileSync(out, 'utf8')).toBe('out\n');
      // An exec sees the container's volumes too.
      expect(await cli('exec', r, 'cat', '/v/out', '/v/in')).toMatchObject({ code: 0, stdout: 'out\ncopied-in\n' });
      expect((await cli('rm', '-f', c, r)).code).toBe(0);
      await cli('volume', 'rm', share);
    });
    test('inspect lists binds, volumes and tmpfs mounts in dockerd\'s shape', async () => {
      const c = named('kinds');
      const share = named('kinds-vol');
      expect((await cli('create', '--name', c, '-v', `${configDir}:/host:ro`, '-v', `${share}:/v`, '--mount', 'type=tmpfs,dst=/tm,tmpfs-size=1048576', image, 'true')).code).toBe(0);
      const shown = (await cli('inspect', '-f', '{{range .Mounts}}{{.Type}} {{.Name}} {{.Source}} {{.Destination}} {{.Driver}} "{{.Mode}}" {{.RW}} "{{.Propagation}}"|{{end}}', c)).stdout.trim().split('|').filter((m) => m !== '').sort();
      const mountpoint = (await cli('volume', 'inspect', '-f', '{{.Mountpoint}}', share)).stdout.trim();
      expect(shown).toEqual([
        `bind  ${configDir} /host  "ro" false "rprivate"`,
        'tmpfs   /tm  "" true ""',
        `volume ${share} ${mountpoint} /v local "z" true ""`,
      ]);
      expect((await cli('rm', c)).code).toBe(0);
      await cli('volume', 'rm', share);
    });
    test('docker volume rm of a volume in use fails; once its containers are gone it is removed', async () => {
      const inUse = await cli('volume', 'rm', volume);
      expect(inUse.code).not.toBe(0);
      expect(inUse.stderr).toContain(`remove ${volume}: volume is in use`);
      expect((await cli('rm', ...sharers)).code).toBe(0);
      expect((await cli('volume', 'rm', volume)).code).toBe(0);
      const gone = await cli('volume', 'inspect', volume);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toContain('no such volume');
    });
  });
}
