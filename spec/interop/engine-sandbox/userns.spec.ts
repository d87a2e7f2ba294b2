import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket } from '../../engine/helpers.js';

const CLI = '/usr/local/bin/docker';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const root: PeerCheck = { name: 'a server running as root (it writes the user namespace\'s full map)', available: () => process.getuid?.() === 0 };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));
/** The range the specs ask for, so that host ids are known whatever /etc/subuid says. */
const MAP = { uid: 100000, gid: 100000, size: 65536 };

function docker(socket: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    const child = execFile(CLI, args, { env, timeout: 30_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

describeWithPeers('Docker CLI 28 against the sandbox runtime: container ids map onto an unprivileged host range (a user namespace)', [program(CLI), bwrap, root], () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-userns-'));
  const runtime = hasBwrap && process.getuid?.() === 0 ? sandboxRuntime({ stateDir, userns: MAP }) : undefined;
  const listening = runtime ? listenOnSocket(runtime) : undefined;
  afterAll(async () => {
    await (await listening)?.close();
    await runtime?.close?.();
  });
  const cli = async (...args: string[]) => docker((await listening)!.socket, args);
  /** A host directory anyone may enter and write, holding a root-owned 0644 file. */
  const hostDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-userns-bind-'));
    chmodSync(dir, 0o777);
    writeFileSync(join(dir, 'root-owned'), 'host\n', { mode: 0o644 });
    return dir;
  };

  test('container root is not host root: its uid_map maps 0 onto host uid 100000', async () => {
    const r = await cli('run', '--rm', 'busybox', 'sh', '-c', 'id -u; cat /proc/self/uid_map');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('0');
    expect(r.stdout.split('\n')[1]!.trim().split(/\s+/)).toEqual(['0', '100000', '65536']);
  });
  // A host bind is idmapped through the container's user namespace (an administrator's container,
  // as here): on it, the container's ids are the host's, as on dockerd. The root filesystem stays mapped.
  test('-v /dir:/x is idmapped: container root appends to a root-owned 0644 host file as host root, -u nobody cannot', async () => {
    const dir = hostDir();
    expect((await cli('run', '--rm', '-v', `${dir}:/x`, 'busybox', 'sh', '-c', 'echo owned >> /x/root-owned')).code).toBe(0);
    const r = await cli('run', '--rm', '-u', 'nobody', '-v', `${dir}:/x`, 'busybox', 'sh', '-c', 'echo nobody >> /x/root-owned');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Permission denied');
    expect(readFileSync(join(dir, 'root-owned'), 'utf8')).toBe('host\nowned\n');
  });
  test('a file created on a bind belongs to the container\'s own id on the host: 0 for root, 1000 for -u 1000, 65534 for nobody', async () => {
    const dir = hostDir();
    for (const [user, name] of [['0', 'by-root'], ['1000', 'by-user'], ['nobody', 'by-nobody']] as const) {
      expect((await cli('run', '--rm', '-u', user, '-v', `${dir}:/x`, 'busybox', 'touch', `/x/${name}`)).code).toBe(0);
    }
    const owner = (name: string) => `${statSync(join(dir, name)).uid}:${statSync(join(dir, name)).gid}`;
    expect([owner('by-root'), owner('by-user'), owner('by-nobody')]).toEqual(['0:0', '1000:1000', '65534:65534']);
  });
  test('a host directory private to root (0700) is open to container root through the idmapped bind, as on dockerd, and closed to -u nobody', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-userns-private-'));
    writeFileSync(join(dir, 'inside'), '');
    const asRoot = await cli('run', '--rm', '-v', `${dir}:/x`, 'busybox', 'ls', '/x');
    expect([asRoot.code, asRoot.stdout]).toEqual([0, 'inside\n']);
    const asNobody = await cli('run', '--rm', '-u', 'nobody', '-v', `${dir}:/x`, 'busybox', 'ls', '/x');
    expect(asNobody.code).not.toBe(0);
    expect(asNobody.stderr).toContain('Permission denied');
  });
  test('docker exec joins the same namespace as any user, with the filter: on the bind, files it makes are owned by its own id', async () => {
    const dir = hostDir();
    const name = `dg-userns-exec-${Date.now()}`;
    expect((await cli('run', '-d', '--name', name, '-u', '1000', '-v', `${dir}:/x`, 'busybox', 'sleep', '30')).code).toBe(0);
    try {
      const asNobody = await cli('exec', '-u', 'nobody', name, 'sh', '-c', 'touch /x/exec-nobody; grep ^Seccomp: /proc/self/status; echo more >> /x/root-owned');
      expect(asNobody.stdout).toMatch(/^Seccomp:\s+2\n$/);
      expect(asNobody.stderr).toContain('Permission denied');
      expect((await cli('exec', '-u', '0', name, 'touch', '/x/exec-root')).code).toBe(0);
      expect(statSync(join(dir, 'exec-nobody')).uid).toBe(65534);
      expect(statSync(join(dir, 'exec-root')).uid).toBe(0);
    } finally {
      await cli('rm', '-f', name);
    }
  });
  test('docker cp into a created and into a running container writes files as the mapped owners', async () => {
    const name = `dg-userns-cp-${Date.now()}`;
    const created = await cli('create', '--name', name, 'busybox', 'sleep', '30');
    expect(created.code).toBe(0);
    const id = created.stdout.trim();
    const src = mkdtempSync(join(tmpdir(), 'dockgate-userns-cp-'));
    writeFileSync(join(src, 'copied'), 'in\n');
    expect((await cli('cp', join(src, 'copied'), `${name}:/tmp/offline`)).code).toBe(0);
    expect((await cli('start', name)).code).toBe(0);
    expect((await cli('cp', join(src, 'copied'), `${name}:/tmp/online`)).code).toBe(0);
    const rootfs = join(stateDir, 'overlays', id, 'merged');
    expect(lstatSync(join(rootfs, 'tmp', 'offline')).uid).toBe(100000);
    expect(lstatSync(join(rootfs, 'tmp', 'online')).uid).toBe(100000);
    expect((await cli('exec', name, 'stat', '-c', '%u:%g', '/tmp/offline')).stdout).toBe('0:0\n');
    await cli('rm', '-f', name);
  });
  test('the image\'s root filesystem is prepared for the range once, shared by each container overlay as its lower layer', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await cli('create', 'busybox', 'true');
      ids.push(r.stdout.trim());
      expect((await cli('start', '-a', ids[i]!)).code).toBe(0);
    }
    const shifted = join(stateDir, 'images', 'rootfs-100000.100000');
    const prepared = readdirSync(shifted).filter((n) => !n.startsWith('.'));
    expect(prepared.length).toBe(1);
    const etc = statSync(join(shifted, prepared[0]!, 'etc'));
    expect(`${etc.uid}:${etc.gid}`).toBe('100000:100000');
    for (const id of ids) expect(statSync(join(stateDir, 'overlays', id, 'merged', 'etc', 'passwd')).uid).toBe(100000);
    expect(statSync(join(stateDir, 'images', 'rootfs')).isDirectory()).toBe(true);
    for (const id of ids) await cli('rm', id);
  });
  test('docker rmi removes the image\'s copy prepared for the range with it', async () => {
    const id = (await cli('image', 'inspect', '-f', '{{.Id}}', 'busybox')).stdout.trim();
    const prepared = join(stateDir, 'images', 'rootfs-100000.100000', id.replace(/^sha256:/, ''));
    expect(existsSync(prepared)).toBe(true);
    const tags = (await cli('image', 'inspect', '-f', '{{join .RepoTags " "}}', 'busybox')).stdout.trim().split(' ');
    expect((await cli('rmi', ...tags)).code).toBe(0);
    expect(existsSync(prepared)).toBe(false);
  });
  test('a User beyond the range (uid 70000) is refused at create, naming User', async () => {
    const r = await cli('run', '--rm', '-u', '70000', 'busybox', 'true');
    expect(r.code).toBe(125);
    expect(r.stderr).toContain('User "70000": ids above 65535 are outside the container user namespace\'s range');
  });
});
