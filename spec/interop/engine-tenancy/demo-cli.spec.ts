/**
 * Two real users and an administrator through the Docker CLI 28 over TCP, each with a bearer
 * token from the demo's own token service (config.json `HttpHeaders`), against the demo's
 * default sandbox runtime, started with `--engine-admins root`. Tenants cannot see or touch each
 * other's containers nor reach the host; the administrator can.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { htpasswdLine } from '../../../lib/index.js';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { DOCKER_CLI, dockerCli, type DockerCli, type ProgramResult } from '../support/index.js';
import { asEngineUser, ENGINE_USER } from '../support/engine-user.js';

const MAIN = join(process.cwd(), 'demo/dist/main.js');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => existsSync('/bin/busybox') && existsSync('/usr/bin/bwrap') };

interface RunningDemo { child: ChildProcess; output: () => string }

/** The demo; in the rootless pass (engine-user.ts) as that user, `owned` handed to it. */
function startDemo(args: string[], owned: string[]): Promise<RunningDemo> {
  const as = asEngineUser(process.execPath, [MAIN, ...args], owned);
  const child = spawn(as.command, as.args, { env: as.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`demo did not start:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      if (out.includes('Ctrl-C stops the demo.')) {
        clearTimeout(timer);
        resolve({ child, output: () => out });
      }
    });
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`demo exited:\n${out}`)); });
  });
}

const shown = (r: ProgramResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;
function expectSuccess(r: ProgramResult): void {
  expect({ code: r.code, output: shown(r) }).toEqual({ code: 0, output: expect.any(String) });
}
function expectRefused(r: ProgramResult, message: string | RegExp): void {
  expect({ code: r.code === 0 ? 0 : 'failed', output: shown(r) }).toEqual({ code: 'failed', output: expect.any(String) });
  expect(r.stderr).toMatch(typeof message === 'string' ? new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : message);
}

describeWithPeers('several users through the Docker CLI over TCP with bearer tokens: tenants and an administrator (demo, sandbox runtime)', [
  { name: 'demo/dist/main.js (npm run build:demo)', available: () => existsSync(MAIN) },
  program(DOCKER_CLI, ['--version']), bwrap,
], () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-tenancy-demo-'));
  const users = { alice: 'alice pw', bob: 'bob pw', root: 'root pw' };
  const clis: Record<string, DockerCli> = {};
  let demo: RunningDemo;
  let base: string;
  let tcpHost: string;
  const name = `alice-web-${process.pid}`;
  const docker = (user: keyof typeof users, args: string[], timeoutMs = 30_000) => clis[user]!.docker(args, { env: { DOCKER_HOST: tcpHost }, timeoutMs });

  beforeAll(async () => {
    writeFileSync(join(dir, 'users'), `${(await Promise.all(Object.entries(users).map(([u, p]) => htpasswdLine(u, p, 4)))).join('\n')}\n`);
    demo = await startDemo(['--port', '0', '--engine-socket', join(dir, 'engine.sock'), '--state-dir', join(dir, 'state'), '--users', join(dir, 'users'), '--engine-admins', 'root',
      // Rootless with a mapped range, each tenant's containers get a block of it (README: owners' ranges).
      ...(ENGINE_USER ? ['--userns-size', '2000'] : [])], [dir, join(dir, 'users')]);
    base = /registry routes\s+(\S+)\/v2\//.exec(demo.output())![1] as string;
    tcpHost = `${base.replace(/^http:/, 'tcp:')}/engine`;
    for (const [user, password] of Object.entries(users)) {
      const res = await fetch(`${base}/token?service=registry.local&scope=engine:api:read,write`, { headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } });
      const { token } = (await res.json()) as { token: string };
      const cli = await dockerCli();
      // The Docker CLI sends config.json's HttpHeaders with every engine request.
      writeFileSync(join(cli.configDir, 'config.json'), JSON.stringify({ HttpHeaders: { Authorization: `Bearer ${token}` } }));
      clis[user] = cli;
    }
    expectSuccess(await docker('alice', ['run', '-d', '--name', name, 'busybox', 'sh', '-c', 'echo alice-secret; sleep 300']));
  }, 60_000);

  afterAll(async () => {
    await docker('root', ['rm', '-f', name]).catch(() => undefined);
    if (demo?.child.exitCode === null) demo.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 500));
    if (demo?.child.exitCode === null) demo.child.kill('SIGKILL');
    for (const cli of Object.values(clis)) await cli.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the banner says which endpoint is whose: the socket the local administrator\'s, TCP tenants, root administering', () => {
    expect(demo.output()).toMatch(/the local administrator's: everything/);
    expect(demo.output()).toMatch(/tenants: every signed-in account sees and acts on its own containers only/);
    expect(demo.output()).toMatch(/administrators: root\n/);
  });

  describe("bob cannot see or touch alice's container", () => {
    test('docker ps -a does not list it; alice\'s does', async () => {
      const bobs = await docker('bob', ['ps', '-a', '--format', '{{.Names}}']);
      expectSuccess(bobs);
      expect(bobs.stdout).not.toContain(name);
      expect((await docker('alice', ['ps', '--format', '{{.Names}}'])).stdout).toContain(name);
    });

    test.each([
      ['inspect', ['container', 'inspect', name]],
      ['logs', ['logs', name]],
      ['exec', ['exec', name, 'echo', 'in']],
      ['stop', ['stop', '-t', '1', name]],
      ['kill', ['kill', name]],
      ['rm', ['rm', name]],
      ['rename', ['rename', name, 'mine-now']],
      ['cp', ['cp', `${name}:/etc/passwd`, join(dir, 'stolen')]],
    ])('docker %s answers No such container, and the container is untouched', async (_what, args) => {
      expectRefused(await docker('bob', args), `No such container: ${name}`);
      const state = await docker('alice', ['inspect', '--format', '{{.State.Running}} {{.Name}}', name]);
      expect(state.stdout.trim()).toBe(`true /${name}`);
    });

    test('alice herself reaches it: logs, exec and top', async () => {
      expect((await docker('alice', ['logs', name])).stdout).toBe('alice-secret\n');
      expect((await docker('alice', ['exec', name, 'echo', 'inside'])).stdout).toBe('inside\n');
      expectSuccess(await docker('alice', ['top', name]));
    });

    test('docker rm -f (which the CLI reports as done when the engine says No such container) leaves it running', async () => {
      await docker('bob', ['rm', '-f', name]);
      const state = await docker('alice', ['inspect', '--format', '{{.State.Running}}', name]);
      expect(state.stdout.trim()).toBe('true');
    });

    test("docker events shows bob his own containers' events and none of alice's", async () => {
      const since = Math.floor(Date.now() / 1000) - 1;
      expectSuccess(await docker('alice', ['run', '--rm', '--name', `alice-ev-${process.pid}`, 'busybox', 'true']));
      expectSuccess(await docker('bob', ['run', '--rm', '--name', `bob-ev-${process.pid}`, 'busybox', 'true']));
      const until = Math.floor(Date.now() / 1000) + 1;
      const events = await docker('bob', ['events', '--since', String(since), '--until', String(until), '--format', '{{.Actor.Attributes.name}}']);
      expectSuccess(events);
      expect(events.stdout).toContain(`bob-ev-${process.pid}`);
      expect(events.stdout).not.toContain('alice-');
    });
  });

  describe("bob cannot see alice's network nor her containers on the shared bridge", () => {
    const net = `alice-net-${process.pid}`;
    afterAll(async () => {
      await docker('root', ['network', 'rm', net]).catch(() => undefined);
    });

    test('docker network ls shows bob bridge, host and none, not alice\'s network; docker network inspect of it answers network not found', async () => {
      expectSuccess(await docker('alice', ['network', 'create', net]));
      const bobs = await docker('bob', ['network', 'ls', '--format', '{{.Name}}']);
      expectSuccess(bobs);
      expect(bobs.stdout.split('\n').filter(Boolean).sort()).toEqual(['bridge', 'host', 'none']);
      expect((await docker('alice', ['network', 'ls', '--format', '{{.Name}}'])).stdout).toContain(net);
      expectRefused(await docker('bob', ['network', 'inspect', net]), `Error response from daemon: network ${net} not found`);
      expect((await docker('root', ['network', 'ls', '--format', '{{.Name}}'])).stdout).toContain(net);
    });

    test("docker network inspect bridge lists alice's running container for alice and the administrator, not for bob", async () => {
      const id = (await docker('alice', ['inspect', '--format', '{{.Id}}', name])).stdout.trim();
      const members = async (user: keyof typeof users) => Object.keys(JSON.parse((await docker(user, ['network', 'inspect', '--format', '{{json .Containers}}', 'bridge'])).stdout));
      expect(await members('alice')).toContain(id);
      expect(await members('root')).toContain(id);
      expect(await members('bob')).not.toContain(id);
    });
  });

  describe('bob cannot reach the host; the administrator can', () => {
    test.each([
      ['-v /:/host', ['-v', '/:/host'], 'HostConfig.Binds: binding the host path / is for administrators'],
      ['--cap-add SYS_ADMIN', ['--cap-add', 'SYS_ADMIN'], "HostConfig.CapAdd: SYS_ADMIN is beyond Docker's default capabilities"],
      ['--network host', ['--network', 'host'], 'HostConfig.NetworkMode: the host\'s namespace ("host") is for administrators'],
      ['--privileged', ['--privileged'], 'HostConfig.Privileged: privileged containers are for administrators'],
    ])('docker run %s is refused for bob naming the field', async (_flag, flags, message) => {
      expectRefused(await docker('bob', ['run', '--rm', ...flags, 'busybox', 'true']), message);
    });

    test('the administrator runs -v /:/host:ro, --cap-add SYS_ADMIN and --network host', async () => {
      const bind = await docker('root', ['run', '--rm', '-v', '/:/host:ro', 'busybox', 'cat', '/host/etc/hostname']);
      expectSuccess(bind);
      expectSuccess(await docker('root', ['run', '--rm', '--cap-add', 'SYS_ADMIN', 'busybox', 'true']));
      expectSuccess(await docker('root', ['run', '--rm', '--network', 'host', 'busybox', 'true']));
      // --privileged passes the policy; whether the runtime can honor it is the runtime's answer.
      expect((await docker('root', ['run', '--rm', '--privileged', 'busybox', 'true'])).stderr).not.toMatch(/is for administrators/);
    });

    test('the administrator sees and may stop alice\'s container', async () => {
      expect((await docker('root', ['ps', '--format', '{{.Names}}'])).stdout).toContain(name);
      expectSuccess(await docker('root', ['logs', name]));
    });
  });

  describe('image names: bob tags under bob/ only', () => {
    test('docker tag busybox bob/box works; docker tag busybox busybox:evil is refused', async () => {
      expectSuccess(await docker('bob', ['tag', 'busybox', 'bob/box:1']));
      expectRefused(await docker('bob', ['tag', 'busybox', 'busybox:evil']), 'busybox:evil is not in your namespace (bob/…): only administrators may write it');
      expectRefused(await docker('bob', ['rmi', 'busybox']), 'only administrators may delete it');
    });
  });
});
