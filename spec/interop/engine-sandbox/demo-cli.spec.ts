/**
 * The demo's default runtime (sandbox) through the Docker CLI 28, the demo started as a process:
 * `docker run -it` on a real terminal, a pull through the demo's own token service from a registry
 * 2.8 that trusts it (image pushed by dockerd), save/rmi/load, and state that survives a restart.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { dockerd, dockerImage, describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { DOCKER_CLI, dockerCli, startRegistry, type DockerCli, type ProgramResult, type RunningRegistry } from '../support/index.js';

const MAIN = join(process.cwd(), 'demo/dist/main.js');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => existsSync('/bin/busybox') && existsSync('/usr/bin/bwrap') };

interface RunningDemo { child: ChildProcess; output: () => string; exited: Promise<number | null> }

function startDemo(args: string[]): Promise<RunningDemo> {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      if (out.includes('Ctrl-C stops the demo.')) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    });
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`demo exited:\n${out}`)); });
  });
}

const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
function expectSuccess(r: ProgramResult): void {
  expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
}

describeWithPeers('Docker CLI 28 against the demo\'s default (sandbox) runtime: terminal, pull through the token flow, save/load, restart', [
  { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(MAIN) },
  dockerd(), dockerImage('busybox:local'), program('docker-registry', ['--version']), program(DOCKER_CLI, ['--version']), bwrap,
], () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-sandbox-demo-'));
  const socket = join(dir, 'engine.sock');
  const state = join(dir, 'state');
  const demoArgs = ['--port', '0', '--engine-socket', socket, '--state-dir', state];
  const onDemo = { DOCKER_HOST: `unix://${socket}` };
  const onDockerd = { DOCKER_HOST: 'unix:///var/run/docker.sock' };
  let demo: RunningDemo;
  let registry: RunningRegistry;
  let cli: DockerCli;
  let anonymous: DockerCli;
  let viaDemo: DockerCli;
  let image: string;
  const container = `dg10c-push-${process.pid}`;

  beforeAll(async () => {
    demo = await startDemo(demoArgs);
    cli = await dockerCli();
    anonymous = await dockerCli();
    viaDemo = await dockerCli();
    const text = demo.output();
    const value = (key: string) => JSON.parse(new RegExp(`^\\s+${key}: (".*")$`, 'm').exec(text)![1] as string) as string;
    registry = await startRegistry({ realm: value('realm'), service: value('service'), issuer: value('issuer'), certPem: readFileSync(value('rootcertbundle'), 'utf8') });
    image = `${registry.host}/alice/dg10c-${process.pid}:1`;
    // dockerd makes an image with its own CMD and file, and pushes it with alice's token.
    expectSuccess(await cli.docker(['run', '--name', container, 'busybox:local', 'sh', '-c', 'echo from-the-registry > /hello'], { env: onDockerd }));
    expectSuccess(await cli.docker(['commit', '--change', 'CMD ["cat", "/hello"]', container, image], { env: onDockerd }));
    await cli.docker(['rm', container], { env: onDockerd });
    // The push is dockerd's, with a login through dockerd.
    expectSuccess(await cli.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: 'wonderland', env: onDockerd }));
    expectSuccess(await cli.docker(['push', image], { env: onDockerd, timeoutMs: 60_000 }));
  }, 120_000);

  afterAll(async () => {
    await cli?.docker(['rmi', '--force', image], { env: onDockerd });
    if (demo?.child.exitCode === null) demo.child.kill('SIGKILL');
    await registry?.stop();
    await cli?.dispose();
    await anonymous?.dispose();
    await viaDemo?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('docker run -it gets a real terminal: test -t 1 is true, stdin reaches the shell, a window resize is seen by stty size', async () => {
    const term = spawnPty(DOCKER_CLI, ['run', '-it', '--rm', 'busybox', 'sh'], {
      name: 'xterm', cols: 100, rows: 40, cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, DOCKER_CONFIG: cli.configDir, ...onDemo },
    });
    let out = '';
    term.onData((d) => { out += d; });
    const exit = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    const until = async (pattern: RegExp) => {
      for (let i = 0; i < 100 && !pattern.test(out); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).toMatch(pattern);
    };
    await until(/\/ # /);
    term.write('test -t 1 && echo TTY-$((6*7)); stty size\r');
    await until(/TTY-42/);
    await until(/40 100/);
    term.resize(120, 50);
    await new Promise((r) => setTimeout(r, 700));
    term.write('stty size; exit 7\r');
    expect(await exit).toBe(7);
    expect(out).toMatch(/50 120/);
  });

  test('a pull without credentials is refused with the registry\'s reason, in dockerd\'s words', async () => {
    const ours = await anonymous.docker(['pull', image], { env: onDemo, timeoutMs: 10_000 });
    const daemon = await anonymous.docker(['pull', image], { env: onDockerd, timeoutMs: 10_000 });
    expect(ours.code).not.toBe(0);
    expect(ours.stderr.trim()).toBe(daemon.stderr.trim());
  });

  test('docker login through the demo\'s engine (POST /auth) stores an identity token; a wrong password is refused in dockerd\'s words', async () => {
    const wrongOurs = await viaDemo.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: 'nope', env: onDemo });
    const wrongDaemon = await anonymous.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: 'nope', env: onDockerd });
    expect(wrongOurs.code).not.toBe(0);
    expect(wrongOurs.stderr.trim()).toBe(wrongDaemon.stderr.trim());
    const login = await viaDemo.docker(['login', registry.host, '-u', 'alice', '--password-stdin'], { input: 'wonderland', env: onDemo });
    expect(login.stdout).toContain('Login Succeeded');
    const auths = (await viaDemo.readConfig()).auths ?? {};
    expect(auths[registry.host]?.identitytoken).toMatch(/\S/);
    expect(await viaDemo.readConfigText()).not.toContain('wonderland');
  });

  test('with docker login credentials the pull goes through the demo\'s token service and the image runs its own CMD and files', async () => {
    const pull = await viaDemo.docker(['pull', image], { env: onDemo, timeoutMs: 60_000 });
    expectSuccess(pull);
    expect(pull.stdout).toContain(`Status: Downloaded newer image for ${image}`);
    const run = await cli.docker(['run', '--rm', image], { env: onDemo });
    expect(run.stdout).toBe('from-the-registry\n');
  });

  test('docker save, docker rmi, docker load, then run', async () => {
    const tar = join(dir, 'saved.tar');
    expectSuccess(await cli.docker(['save', '-o', tar, image], { env: onDemo }));
    expectSuccess(await cli.docker(['rmi', image], { env: onDemo }));
    expect((await cli.docker(['image', 'inspect', image], { env: onDemo })).code).not.toBe(0);
    const load = await cli.docker(['load', '-i', tar], { env: onDemo });
    expectSuccess(load);
    expect(load.stdout).toContain(`Loaded image: ${image}`);
    expect((await cli.docker(['run', '--rm', image], { env: onDemo })).stdout).toBe('from-the-registry\n');
  });

  test('an exited container, its logs and the pulled image are still there after the demo restarts', async () => {
    const name = `dg10c-kept-${process.pid}`;
    const run = await cli.docker(['run', '--name', name, 'busybox', 'sh', '-c', 'echo kept-log; exit 4'], { env: onDemo });
    expect(run.code).toBe(4);
    demo.child.kill('SIGINT');
    expect(await demo.exited).toBe(0);
    demo = await startDemo(demoArgs);
    const ps = await cli.docker(['ps', '-a', '--filter', `name=${name}`, '--format', '{{.Status}}'], { env: onDemo });
    expect(ps.stdout).toMatch(/^Exited \(4\)/);
    const logs = await cli.docker(['logs', name], { env: onDemo });
    expect(logs.stdout).toBe('kept-log\n');
    expect((await cli.docker(['run', '--rm', image], { env: onDemo })).stdout).toBe('from-the-registry\n');
  }, 60_000);
});
