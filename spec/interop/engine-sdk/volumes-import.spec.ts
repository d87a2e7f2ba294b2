/**
 * docker-py 7 volumes and import through dockgate (sandbox runtime, dockerd behind the Docker
 * runtime) and against dockerd itself: the same script, the same answers.
 */
import { test, expect, afterAll, jest } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, type PeerCheck } from '../../support/peers.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const here = dirname(fileURLToPath(import.meta.url));
jest.setTimeout(90_000);
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter');
const bwrap: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter (util-linux)', available: () => hasBwrap };
const dockerPy: PeerCheck = { name: 'docker-py (python3 -c "import docker")', available: () => spawnSync('python3', ['-c', 'import docker']).status === 0 };

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('python3', args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env }, timeout: 80_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const targets: [string, (() => ContainerRuntime) | undefined, string, PeerCheck[]][] = [
  ['sandbox runtime', () => sandboxRuntime(), 'busybox:latest', [bwrap]],
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
  ['dockerd itself (the reference)', undefined, 'busybox:local', [dockerd(), dockerImage('busybox:local')]],
];

for (const [label, make, image, peers] of targets) {
  describeWithPeers(`docker-py 7 volumes and import (${label})`, [dockerPy, ...peers], () => {
    const runtime = make?.();
    const listening = runtime ? listenOnSocket(runtime, '1.12-1.41') : undefined;
    afterAll(async () => {
      await (await listening)?.close();
      await runtime?.close?.();
    });

    test('a volume shared by two containers, an anonymous volume through volumes_from and rm -v, import_image_from_data with changes', async () => {
      const socket = listening ? (await listening).socket : '/var/run/docker.sock';
      const r = await run([join(here, '../fixtures/docker-py-volumes.py'), image, `${process.pid}-${Date.now()}`], { DOCKER_HOST: `unix://${socket}` });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({
        shared: 'from-writer\n',
        volume_labels: { spec: 'docker-py' },
        anonymous_name_length: 64,
        volumes_from_ro: true,
        anonymous_removed: true,
        import_status: 'sha256:',
        import_config: { Env: ['FROM=py'], Labels: { by: 'docker-py' }, Comment: 'Imported from -' },
      });
      expect(out.writer_mounts).toEqual([{ Type: 'volume', Name: expect.stringMatching(/^dgpy-vol-/), Destination: '/data', Driver: 'local', Mode: 'rw', RW: true }]);
    });
  });
}
