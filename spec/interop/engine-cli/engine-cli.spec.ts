import { test, expect, afterAll } from '@jest/globals';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, dockerd, dockerImage, program } from '../../support/peers.js';
import { type ContainerRuntime } from '../../../lib/engine/index.js';
import { dockerRuntime } from '../../../lib/engine/runtime/docker/index.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const IMAGE = 'busybox:local';

/** Runs the Docker CLI 28 against a socket, asynchronously (the server lives in this process). */
function docker(socket: string, args: string[], onSpawn?: (child: ChildProcess) => void): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    const child = execFile(CLI, args, { env, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    onSpawn?.(child);
  });
}

/** Polls until the CLI reports the container running (the CLI starts it only after attaching). */
async function untilRunning(socket: string, name: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = await docker(socket, ['inspect', '-f', '{{.State.Running}}', name]);
    if (r.stdout.trim() === 'true') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${name} never ran`);
}
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));

const runtimes: [string, () => ContainerRuntime, string[]][] = [
  ['process runtime', () => processRuntime({ images: { [IMAGE]: { program: '/bin/busybox' } } }), []],
  // dockerd here runs with --bridge=none, so containers need --network none.
  ['Docker runtime (dockerd behind dockgate)', () => dockerRuntime({ socketPath: '/var/run/docker.sock' }), ['--network', 'none']],
];

for (const [label, make, netArgs] of runtimes) {
  describeWithPeers(`Docker CLI 28 drives containers through dockgate (API 1.28, ${label})`, [program(CLI), dockerd(), dockerImage(IMAGE)], () => {
    const runtime = make();
    const listening = listenOnSocket(runtime);
    afterAll(async () => {
      await (await listening).close();
      await runtime.close?.();
    });

    test('docker version negotiates down to 1.28', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['version', '--format', '{{.Client.APIVersion}} {{.Server.APIVersion}} {{.Server.MinAPIVersion}}']);
      expect(r.stdout.trim()).toBe('1.28 1.28 1.12');
    });
    test('docker run --rm IMAGE echo hello prints hello (attach upgrade + events wait) and removes it', async () => {
      const { socket } = await listening;
      const name = `dg-run-${Date.now()}`;
      const r = await docker(socket, ['run', '--rm', ...netArgs, '--name', name, IMAGE, 'echo', 'hello']);
      expect(r).toMatchObject({ code: 0, stdout: 'hello\n' });
      const ps = await docker(socket, ['ps', '-a', '--filter', `name=${name}`, '--format', '{{.Names}}']);
      expect(ps.stdout.trim()).toBe('');
    });
    test('docker run returns the container exit code', async () => {
      const { socket } = await listening;
      const r = await docker(socket, ['run', '--rm', ...netArgs, IMAGE, 'sh', '-c', 'echo to-stderr >&2; exit 3']);
      expect(r.code).toBe(3);
      expect(r.stderr).toBe('to-stderr\n');
    });
    test('docker create, start, wait, logs, ps -a, rm', async () => {
      const { socket } = await listening;
      const name = `dg-life-${Date.now()}`;
      const created = await docker(socket, ['create', ...netArgs, '--name', name, IMAGE, 'sh', '-c', 'echo out; echo err >&2; exit 4']);
      expect(created.code).toBe(0);
      expect(created.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
      expect((await docker(socket, ['start', name])).stdout.trim()).toBe(name);
      expect((await docker(socket, ['wait', name])).stdout.trim()).toBe('4');
      const logs = await docker(socket, ['logs', name]);
      expect(logs).toMatchObject({ code: 0, stdout: 'out\n', stderr: 'err\n' });
      const ps = await docker(socket, ['ps', '-a', '--filter', `name=${name}`, '--format', '{{.Names}}|{{.Status}}']);
      expect(ps.stdout.trim()).toMatch(new RegExp(`^${name}\\|Exited \\(4\\) `));
      expect((await docker(socket, ['rm', name])).stdout.trim()).toBe(name);
      const gone = await docker(socket, ['logs', name]);
      expect(gone.code).not.toBe(0);
      expect(gone.stderr).toBe(`Error response from daemon: No such container: ${name}\n`);
    });
    test('docker kill on a running sleep 30 container ends it (137); again is dockerd\'s "is not running" error', async () => {
      const { socket } = await listening;
      const name = `dg-kill-${Date.now()}`;
      expect((await docker(socket, ['run', '-d', ...netArgs, '--name', name, IMAGE, 'sleep', '30'])).code).toBe(0);
      expect(await docker(socket, ['kill', name])).toMatchObject({ code: 0, stdout: `${name}\n` });
      expect((await docker(socket, ['inspect', '-f', '{{.State.Status}} {{.State.ExitCode}}', name])).stdout.trim()).toBe('exited 137');
      const id = (await docker(socket, ['inspect', '-f', '{{.Id}}', name])).stdout.trim();
      const again = await docker(socket, ['kill', name]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain(`Error response from daemon: Cannot kill container: ${name}: Container ${id} is not running`);
      await docker(socket, ['rm', name]);
    });
  });
}

describeWithPeers('Docker CLI 28 stops and signals process-runtime containers (API 1.28)', [program(CLI), dockerImage(IMAGE)], () => {
  const runtime = processRuntime({ images: { [IMAGE]: { program: '/bin/busybox' } } });
  const listening = listenOnSocket(runtime);
  afterAll(async () => {
    await (await listening).close();
    await runtime.close?.();
  });

  test('docker stop on a sleep 30 container: SIGTERM ends it at once (143); stopping it again succeeds (304)', async () => {
    const { socket } = await listening;
    const name = `dg-stop-${Date.now()}`;
    expect((await docker(socket, ['run', '-d', '--name', name, IMAGE, 'sleep', '30'])).code).toBe(0);
    expect(await docker(socket, ['stop', name])).toMatchObject({ code: 0, stdout: `${name}\n` });
    expect((await docker(socket, ['inspect', '-f', '{{.State.Status}} {{.State.ExitCode}}', name])).stdout.trim()).toBe('exited 143');
    expect(await docker(socket, ['stop', name])).toMatchObject({ code: 0, stdout: `${name}\n` });
    await docker(socket, ['rm', name]);
  });
  test('docker stop -t 1 on a container that ignores SIGTERM kills it after a second (137)', async () => {
    const { socket } = await listening;
    const name = `dg-stop-t-${Date.now()}`;
    expect((await docker(socket, ['run', '-d', '--name', name, IMAGE, 'sh', '-c', 'trap "" TERM; sleep 30'])).code).toBe(0);
    await untilRunning(socket, name);
    await new Promise((resolve) => setTimeout(resolve, 100)); // let the shell install its trap
    expect(await docker(socket, ['stop', '-t', '1', name])).toMatchObject({ code: 0, stdout: `${name}\n` });
    expect((await docker(socket, ['inspect', '-f', '{{.State.ExitCode}}', name])).stdout.trim()).toBe('137');
    await docker(socket, ['rm', name]);
  });
  test('Ctrl-C on docker run is proxied as kill?signal=INT: sleep ends and the CLI exits 130', async () => {
    const { socket } = await listening;
    const name = `dg-sigint-${Date.now()}`;
    let cli: ChildProcess | undefined;
    const running = docker(socket, ['run', '--rm', '--name', name, IMAGE, 'sleep', '30'], (child) => (cli = child));
    await untilRunning(socket, name);
    cli?.kill('SIGINT');
    expect((await running).code).toBe(130);
  });
});

describeWithPeers('docker run of an image the engine does not have (API 1.28)', [program(CLI), dockerd(), dockerImage(IMAGE)], () => {
  const local = processRuntime({ images: { [IMAGE]: { program: '/bin/busybox' } } });
  const forwarding = dockerRuntime({ socketPath: '/var/run/docker.sock' });
  const overLocal = listenOnSocket(local);
  const overDockerd = listenOnSocket(forwarding);
  afterAll(async () => {
    await (await overLocal).close();
    await (await overDockerd).close();
    await local.close?.();
    await forwarding.close?.();
  });

  test('process runtime: create says No such image, the pull says this engine cannot pull it', async () => {
    const r = await docker((await overLocal).socket, ['run', 'nope:1', 'echo', 'hi']);
    expect(r.code).toBe(125);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      "Unable to find image 'nope:1' locally\n" +
        'docker: Error response from daemon: No such image: nope:1 (this engine cannot pull images; it runs only the images it is configured with)\n\n' +
        "Run 'docker run --help' for more information\n",
    );
  });
  test('Docker runtime: the CLI prints exactly what it prints against dockerd itself', async () => {
    const through = await docker((await overDockerd).socket, ['run', '--network', 'none', 'nope:1', 'echo', 'hi']);
    const direct = await docker('/var/run/docker.sock', ['run', '--network', 'none', 'nope:1', 'echo', 'hi']);
    expect(direct.stderr).toMatch(/^Unable to find image 'nope:1' locally\ndocker: Error response from daemon: /);
    expect(through).toEqual(direct);
  });
  test('process runtime: docker pull of a configured image is "up to date", and --pull=always runs it', async () => {
    const { socket } = await overLocal;
    const pulled = await docker(socket, ['pull', IMAGE]);
    expect(pulled).toMatchObject({ code: 0, stdout: 'local: Pulling from library/busybox\nStatus: Image is up to date for busybox:local\ndocker.io/library/busybox:local\n' });
    expect(await docker(socket, ['run', '--rm', '--pull=always', IMAGE, 'echo', 'hi'])).toMatchObject({ code: 0, stdout: 'hi\n' });
  });
});
