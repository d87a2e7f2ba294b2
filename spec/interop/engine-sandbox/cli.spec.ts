import { test, expect, afterAll } from '@jest/globals';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeWithPeers, program, type PeerCheck } from '../../support/peers.js';
import { ENGINE_USER, needsRange, sandboxServer } from '../support/engine-user.js';

const CLI = '/usr/local/bin/docker';
const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));

function docker(socket: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir };
  return new Promise((resolve) => {
    execFile(CLI, args, { env, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** What only a rootless server has (the rootless pass, engine-user.ts). */
const rootless = ENGINE_USER ? test : test.skip;

/** The pids of the children of `parent` whose command is `comm` (from /proc: the rootless server's helpers). */
function childrenNamed(parent: number, comm: string): number[] {
  return readdirSync('/proc').filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const [, name, rest] = /^\d+ \((.*)\) (.*)$/s.exec(stat) ?? [];
      return name === comm && Number(rest!.split(' ')[1]) === parent ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
}

/** In the rootless pass (engine-user.ts), what a rootless server cannot do yet. */
const otherUsers = needsRange('a container user other than root needs the subordinate range mapped through newuidmap');

describeWithPeers('Docker CLI 28 against the sandbox runtime: each container is isolated (bubblewrap)', [program(CLI), bwrap], () => {
  const listening = hasBwrap ? sandboxServer({}) : undefined;
  listening?.catch(() => undefined);
  afterAll(async () => {
    await (await listening)?.close();
  });
  const run = async (...args: string[]) => docker((await listening)!.socket, ['run', '--rm', ...args]);

  otherUsers('-u 4242 (no passwd entry) runs as uid 4242, gid 0 (as dockerd does)', async () => {
    expect(await run('-u', '4242', 'busybox', 'id')).toMatchObject({ code: 0, stdout: 'uid=4242 gid=0(root) groups=0(root)\n' });
  });
  otherUsers('-u 1000 takes the passwd entry\'s primary group; -u nobody and -u user:nogroup resolve names in the image', async () => {
    expect(await run('-u', '1000', 'busybox', 'id')).toMatchObject({ code: 0, stdout: 'uid=1000(user) gid=1000(user) groups=1000(user)\n' });
    expect(await run('-u', 'nobody', 'busybox', 'id')).toMatchObject({ code: 0, stdout: 'uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)\n' });
    expect(await run('-u', 'user:nogroup', 'busybox', 'id')).toMatchObject({ code: 0, stdout: 'uid=1000(user) gid=65534(nogroup) groups=65534(nogroup)\n' });
  });
  test('-u with a name the image lacks is refused (at start, as dockerd), naming User in dockerd\'s words', async () => {
    const r = await run('-u', 'daemon', 'busybox', 'id');
    expect(r.code).toBe(125);
    expect(r.stderr).toContain('unable to find user daemon: no matching entries in passwd file');
  });
  test('without --init the command is pid 1; with --init a reaping init is pid 1 and the command pid 2', async () => {
    expect((await run('busybox', 'sh', '-c', 'echo $$')).stdout).toBe('1\n');
    expect((await run('--init', 'busybox', 'sh', '-c', 'echo $$')).stdout).toBe('2\n');
  });
  test('--read-only: touch /x fails', async () => {
    const r = await run('--read-only', 'busybox', 'touch', '/x');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Read-only file system/);
  });
  test('the host /etc/shadow is not there', async () => {
    const r = await run('busybox', 'cat', '/etc/shadow');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/No such file/);
  });
  test('-v host:ctr:ro is readable, not writable; -v host:ctr writes through', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dockgate-v-'));
    // Container root is an unprivileged host uid (the user namespace): the directory is opened to it.
    chmodSync(dir, 0o777);
    writeFileSync(join(dir, 'f'), 'host file\n');
    const ro = await run('-v', `${dir}:/d:ro`, 'busybox', 'sh', '-c', 'cat /d/f; touch /d/g');
    expect(ro.stdout).toBe('host file\n');
    expect(ro.stderr).toMatch(/Read-only/);
    expect((await run('-v', `${dir}:/d`, 'busybox', 'sh', '-c', 'echo w > /d/g')).code).toBe(0);
    expect(existsSync(join(dir, 'g'))).toBe(true);
  });
  test('--network none leaves only lo', async () => {
    const r = await run('--network', 'none', 'busybox', 'sh', '-c', 'cat /proc/net/dev | tail -n +3 | cut -d: -f1');
    expect(r.stdout.trim()).toBe('lo');
  });
  test('--hostname sets the UTS hostname', async () => {
    expect((await run('--hostname', 'sandboxed', 'busybox', 'hostname')).stdout).toBe('sandboxed\n');
  });
  test('--tmpfs mounts a tmpfs (rootless too: in the server\'s own mount namespace)', async () => {
    expect((await run('--tmpfs', '/scratch', 'busybox', 'sh', '-c', 'grep -c " /scratch tmpfs" /proc/mounts')).stdout).toBe('1\n');
  });
  test('a --tmpfs holds no more than its size=, and docker exec sees what the container wrote there', async () => {
    const { socket } = (await listening)!;
    const full = await run('--tmpfs', '/scratch:size=1m', 'busybox', 'sh', '-c', 'dd if=/dev/zero of=/scratch/big bs=1024 count=2048; du -k /scratch/big');
    expect(full.stderr).toMatch(/No space left on device/);
    expect(Number(full.stdout.trim().split(/\s+/)[0])).toBeLessThanOrEqual(1024);
    const name = `dg-tmpfs-${Date.now()}`;
    expect((await docker(socket, ['run', '-d', '--name', name, '--tmpfs', '/scratch', 'busybox', 'sh', '-c', 'echo from-ctr > /scratch/f; sleep 30'])).code).toBe(0);
    try {
      let seen = { code: 1, stdout: '', stderr: '' };
      for (let i = 0; i < 50 && seen.stdout !== 'from-ctr\n'; i++) {
        seen = await docker(socket, ['exec', name, 'cat', '/scratch/f']);
        if (seen.stdout !== 'from-ctr\n') await new Promise((r) => setTimeout(r, 100));
      }
      expect(seen).toMatchObject({ code: 0, stdout: 'from-ctr\n' });
    } finally {
      await docker(socket, ['rm', '-f', name]);
    }
  });
  rootless('rootless: when the holder of the tmpfs mount namespace ends, the next --tmpfs container makes a new one (never enters the old pid\'s /proc path)', async () => {
    const { pid } = (await listening)!;
    expect((await run('--tmpfs', '/scratch', 'busybox', 'true')).code).toBe(0);
    const holders = childrenNamed(pid!, 'cat');
    expect(holders).toHaveLength(1);
    process.kill(holders[0]!, 'SIGKILL');
    for (let i = 0; i < 50 && existsSync(`/proc/${holders[0]!}`); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await run('--tmpfs', '/scratch', 'busybox', 'sh', '-c', 'grep -c " /scratch tmpfs" /proc/mounts')).toMatchObject({ code: 0, stdout: '1\n' });
    expect(childrenNamed(pid!, 'cat')).toHaveLength(1);
  });
  test('--cap-drop ALL leaves no effective capability', async () => {
    expect((await run('--cap-drop', 'ALL', 'busybox', 'grep', 'CapEff', '/proc/self/status')).stdout).toBe('CapEff:\t0000000000000000\n');
  });
  for (const [flag, field] of [[['--privileged'], 'HostConfig.Privileged'], [['-p', '8080:80/sctp'], 'HostConfig.PortBindings'], [['--security-opt', 'apparmor=unconfined'], 'HostConfig.SecurityOpt'], [['--memory-reservation', '64m'], 'HostConfig.MemoryReservation'], [['--blkio-weight', '300'], 'HostConfig.BlkioWeight']] as const) {
    test(`${flag[0]} is refused with a message naming ${field}`, async () => {
      const r = await run(...flag, 'busybox', 'true');
      expect(r.code).toBe(125);
      expect(r.stderr).toContain(field);
    });
  }
  test('a bind source swapped back and forth with a link to a host folder while the container starts is never followed (held at start, rootless too)', async () => {
    const { socket } = (await listening)!;
    const base = mkdtempSync(join(tmpdir(), 'dockgate-swap-'));
    const secret = mkdtempSync(join(tmpdir(), 'dockgate-swap-secret-'));
    mkdirSync(join(base, 'src'));
    writeFileSync(join(base, 'src', 'mine'), 'x');
    writeFileSync(join(secret, 'host-marker'), 'host only\n');
    for (const path of [base, secret, join(base, 'src')]) chmodSync(path, 0o755);
    const id = (await docker(socket, ['create', '-v', `${join(base, 'src')}:/x`, 'busybox', 'ls', '/x'])).stdout.trim();
    spawnSync('ln', ['-s', secret, join(base, 'src.link')]);
    const swapper = spawn('sh', ['-c', `cd ${base} && while :; do mv src src.dir; mv src.link src; sleep 0.02; mv src src.link; mv src.dir src; sleep 0.02; done`], { stdio: 'ignore' });
    try {
      let marker = 0;
      for (let i = 0; i < 80; i++) if ((await docker(socket, ['start', '-a', id])).stdout.includes('host-marker')) marker++;
      expect(marker).toBe(0);
    } finally {
      swapper.kill('SIGKILL');
      await docker(socket, ['rm', '-f', id]);
      rmSync(base, { recursive: true, force: true });
      rmSync(secret, { recursive: true, force: true });
    }
  }, 120_000);
  test('rm -f of sh -c "sleep & sleep & wait" leaves no process behind', async () => {
    const { socket } = (await listening)!;
    const name = `dg-tree-${Date.now()}`;
    expect((await docker(socket, ['run', '-d', '--name', name, 'busybox', 'sh', '-c', 'sleep 2345 & sleep 2345 & wait'])).code).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(spawnSync('pgrep', ['-f', 'sleep 2345']).stdout.toString().trim()).not.toBe('');
    expect((await docker(socket, ['rm', '-f', name])).code).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(spawnSync('pgrep', ['-f', 'sleep 2345']).stdout.toString().trim()).toBe('');
  });
});
