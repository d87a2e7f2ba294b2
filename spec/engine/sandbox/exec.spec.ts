import { test, expect, afterAll } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { Cgroups } from '../../../lib/engine/linux/cgroups.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { socketRequest, listenOnSocket, testApp } from '../helpers.js';

const hasPeers = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox') && existsSync('/usr/bin/nsenter') && existsSync('/usr/bin/setpriv');
const peers: PeerCheck = { name: 'bwrap (bubblewrap), /bin/busybox (busybox-static) and nsenter and setpriv (util-linux)', available: () => hasPeers };
const runtime = hasPeers ? sandboxRuntime() : undefined;
const app = runtime ? testApp(runtime, '1.24-1.43') : undefined;
const listening = runtime ? listenOnSocket(runtime, '1.24-1.43') : undefined;
afterAll(async () => {
  await (await listening)?.close();
  await runtime?.close?.();
});

async function running(extra: object = {}): Promise<string> {
  const res = await request(app!).post('/v1.42/containers/create').send({ Image: 'busybox', Cmd: ['sleep', '300'], ...extra });
  expect(res.status).toBe(201);
  expect((await request(app!).post(`/v1.42/containers/${res.body.Id}/start`)).status).toBe(204);
  return res.body.Id as string;
}

async function execOutput(container: string, body: object, start: object = { Detach: false }): Promise<{ output: string; exitCode: number }> {
  const exec = await request(app!).post(`/v1.42/containers/${container}/exec`).send({ AttachStdout: true, AttachStderr: true, ...body });
  expect(exec.status).toBe(201);
  const { socket } = (await listening)!;
  const res = await socketRequest(socket, 'POST', `/v1.42/exec/${exec.body.Id}/start`, start);
  const info = await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`);
  return { output: (start as { Tty?: boolean }).Tty === true ? res.body.toString('latin1') : demux(res.body as Buffer), exitCode: info.body.ExitCode };
}

/** The payloads of a multiplexed (stdcopy) exec stream, both streams in order. */
function demux(body: Buffer): string {
  let out = '';
  for (let i = 0; i + 8 <= body.length; i += 8 + body.readUInt32BE(i + 4)) out += body.subarray(i + 8, i + 8 + body.readUInt32BE(i + 4)).toString('latin1');
  return out;
}

describeWithPeers('sandbox exec: the command joins the running container (nsenter)', [peers], () => {
  test('it sees the container\'s root filesystem, not the host\'s, and its PID namespace', async () => {
    const id = await running();
    const { output } = await execOutput(id, { Cmd: ['sh', '-c', 'test -e /etc/shadow && echo host || echo contained; cat /proc/1/cmdline | tr "\\0" " "'] });
    expect(output).toContain('contained');
    expect(output).toContain('sleep 300');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('a container with User runs its execs as that uid; the exec\'s User overrides it', async () => {
    const id = await running({ User: '1234:5678' });
    expect((await execOutput(id, { Cmd: ['id'] })).output).toContain('uid=1234 gid=5678');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('a User name resolves in the container\'s /etc/passwd; an unknown one is refused; Privileged too', async () => {
    const id = await running();
    expect((await execOutput(id, { Cmd: ['id'], User: 'nobody' })).output).toContain('uid=65534(nobody)');
    const exec = await request(app!).post(`/v1.42/containers/${id}/exec`).send({ Cmd: ['id'], User: 'no-such-user' });
    const res = await request(app!).post(`/v1.42/exec/${exec.body.Id}/start`).send({ Detach: true });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('no-such-user');
    const priv = await request(app!).post(`/v1.42/containers/${id}/exec`).send({ Cmd: ['id'], Privileged: true });
    expect((await request(app!).post(`/v1.42/exec/${priv.body.Id}/start`).send({ Detach: true })).body).toEqual({ message: 'Privileged is not supported by the sandbox runtime' });
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('Tty: the command runs on a pseudo-terminal of ConsoleSize (API 1.42), output raw', async () => {
    const id = await running();
    const { output, exitCode } = await execOutput(id, { Cmd: ['sh', '-c', 'test -t 1 && echo on-a-tty; busybox stty size'], Tty: true, ConsoleSize: [30, 100] }, { Detach: false, Tty: true, ConsoleSize: [30, 100] });
    expect(exitCode).toBe(0);
    expect(output).toBe('on-a-tty\r\n30 100\r\n');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('an exec\'d process is one of the container\'s: docker top lists it and docker pause stops it', async () => {
    const id = await running();
    const exec = await request(app!).post(`/v1.42/containers/${id}/exec`).send({ Cmd: ['sleep', '402'] });
    await request(app!).post(`/v1.42/exec/${exec.body.Id}/start`).send({ Detach: true });
    let row: string[] | undefined;
    for (let i = 0; i < 50 && !row; i++) {
      const top = await request(app!).get(`/v1.42/containers/${id}/top`);
      row = (top.body.Processes as string[][]).find((p) => p.join(' ').includes('sleep 402'));
      if (!row) await new Promise((r) => setTimeout(r, 20));
    }
    expect(row).toBeDefined();
    const pid = Number(row![1]);
    const state = (): string => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] ?? '';
    const settled = async (stopped: boolean): Promise<boolean> => {
      for (let i = 0; i < 50 && (state() === 'T') !== stopped; i++) await new Promise((r) => setTimeout(r, 20));
      return state() === 'T';
    };
    expect((await request(app!).post(`/v1.42/containers/${id}/pause`)).status).toBe(204);
    expect(await settled(true)).toBe(true);
    expect((await request(app!).post(`/v1.42/containers/${id}/unpause`)).status).toBe(204);
    expect(await settled(false)).toBe(false);
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test.each([[false], [true]])('the exec dies with its container, and reads stopped only once its command is gone (Tty %s)', async (tty) => {
    const id = await running();
    // A duration no other run on this machine uses (suites run side by side here): the process
    // looked for is this exec's own, whoever else sleeps 400 seconds meanwhile.
    const seconds = String(400_000 + Math.floor(Math.random() * 500_000));
    const exec = await request(app!).post(`/v1.42/containers/${id}/exec`).send({ Cmd: ['sleep', seconds], Tty: tty });
    await request(app!).post(`/v1.42/exec/${exec.body.Id}/start`).send({ Detach: true });
    expect((await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`)).body.Running).toBe(true);
    // The probe finds the command while it runs (bwrap execs it a moment after the start).
    const probe = (): string => spawnSync('pgrep', ['-f', `^sleep ${seconds}$`]).stdout.toString().trim();
    for (let i = 0; i < 100 && probe() === ''; i++) await new Promise((r) => setTimeout(r, 20));
    expect(probe()).not.toBe('');
    expect((await request(app!).post(`/v1.42/containers/${id}/kill`)).status).toBe(204);
    for (let i = 0; i < 50 && (await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`)).body.Running; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await request(app!).get(`/v1.42/exec/${exec.body.Id}/json`)).body.Running).toBe(false);
    expect(probe()).toBe('');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
});

const capEff = (output: string): string => /CapEff:\s*([0-9a-f]+)/.exec(output)?.[1] ?? output;

describeWithPeers('sandbox exec runs with the container\'s capability set, as dockerd\'s exec does', [peers], () => {
  test('a --cap-drop ALL container: a root exec has no capabilities and cannot mount', async () => {
    const id = await running({ HostConfig: { CapDrop: ['ALL'] } });
    expect(capEff((await execOutput(id, { Cmd: ['grep', 'CapEff', '/proc/self/status'] })).output)).toBe('0000000000000000');
    const mount = await execOutput(id, { Cmd: ['sh', '-c', 'mkdir -p /m && mount -t tmpfs none /m'] });
    expect(mount.exitCode).not.toBe(0);
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('a default container: a root exec has dockerd\'s default set (a80425fb); CapAdd NET_ADMIN adds it', async () => {
    const id = await running();
    expect(capEff((await execOutput(id, { Cmd: ['grep', 'CapEff', '/proc/self/status'] })).output)).toBe('00000000a80425fb');
    const added = await running({ HostConfig: { CapAdd: ['NET_ADMIN'] } });
    expect(capEff((await execOutput(added, { Cmd: ['grep', 'CapEff', '/proc/self/status'] })).output)).toBe('00000000a80435fb');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
    await request(app!).delete(`/v1.42/containers/${added}?force=1`);
  });
  test('a non-root exec has no capabilities and no_new_privs (setuid files give none back)', async () => {
    const id = await running();
    const { output } = await execOutput(id, { Cmd: ['grep', '-E', 'CapEff|NoNewPrivs', '/proc/self/status'], User: 'nobody' });
    expect(capEff(output)).toBe('0000000000000000');
    expect(output).toMatch(/NoNewPrivs:\s*1/);
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('a root exec keeps the container\'s view: its processes, hostname, working dir, read-only root', async () => {
    const id = await running({ Hostname: 'box1', WorkingDir: '/tmp', HostConfig: { ReadonlyRootfs: true } });
    const { output } = await execOutput(id, { Cmd: ['sh', '-c', 'hostname; pwd; cat /proc/1/cmdline | tr "\\0" " "; echo; touch /x 2>/dev/null && echo writable || echo read-only'] });
    expect(output.split('\n')).toEqual(['box1', '/tmp', 'sleep 300 ', 'read-only', '']);
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('the exec\'s Env reaches the command as given, names that are not shell identifiers too, and no variables of the launcher shell', async () => {
    const id = await running();
    for (const User of ['0', 'nobody']) {
      const { output } = await execOutput(id, { Cmd: ['env'], Env: ['spring.profiles.active=dev'], User });
      expect(output).toContain('spring.profiles.active=dev\n');
      expect(output).not.toMatch(/^(SHLVL|OLDPWD)=/m);
    }
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('in a container with a non-root User an exec may run as root or any other user, as dockerd\'s may (the user namespace maps every id)', async () => {
    const id = await running({ User: '1234:5678' });
    expect((await execOutput(id, { Cmd: ['id'], User: '0' })).output).toBe('uid=0(root) gid=0(root) groups=0(root)\n');
    expect((await execOutput(id, { Cmd: ['id'], User: 'nobody' })).output).toBe('uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)\n');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
});

describeWithPeers('sandbox exec joins the container\'s network namespace and Tmpfs mounts', [peers], () => {
  test('NetworkMode none: the exec sees only lo', async () => {
    const id = await running({ HostConfig: { NetworkMode: 'none' } });
    const { output } = await execOutput(id, { Cmd: ['sh', '-c', 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'] });
    expect(output).toBe('lo\n');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('Tmpfs: a file the container wrote is read by a root and a non-root exec, and the mount is a tmpfs', async () => {
    const res = await request(app!).post('/v1.42/containers/create').send({ Image: 'busybox', Cmd: ['sh', '-c', 'echo from-container > /scratch/f; sleep 300'], HostConfig: { Tmpfs: { '/scratch': '' } } });
    const id = res.body.Id as string;
    await request(app!).post(`/v1.42/containers/${id}/start`);
    let seen = '';
    for (let i = 0; i < 50 && seen !== 'from-container\n'; i++) seen = (await execOutput(id, { Cmd: ['cat', '/scratch/f'] })).output;
    expect(seen).toBe('from-container\n');
    expect((await execOutput(id, { Cmd: ['cat', '/scratch/f'], User: 'nobody' })).output).toBe('from-container\n');
    expect((await execOutput(id, { Cmd: ['sh', '-c', 'grep -c " /scratch tmpfs" /proc/mounts'] })).output).toBe('1\n');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
});

const pidsGroup: PeerCheck = { name: 'a writable cgroup v1 pids controller', available: () => hasPeers && Cgroups.detect().controllers.includes('pids') };

describeWithPeers('sandbox exec joins the container\'s cgroups, as dockerd puts an exec in the container\'s', [peers, pidsGroup], () => {
  test('the exec is in the container\'s group and cgroup namespace (its group is /); its processes count against PidsLimit', async () => {
    const id = await running({ HostConfig: { PidsLimit: 6 } });
    // The container's pids group is its /sys/fs/cgroup/pids: the exec's shell is listed in it.
    const inGroup = ['sh', '-c', 'grep pids /proc/self/cgroup; grep -qx $$ /sys/fs/cgroup/pids/cgroup.procs && echo listed'];
    expect((await execOutput(id, { Cmd: inGroup })).output).toMatch(/^\d+:pids:\/\nlisted\n$/);
    expect((await execOutput(id, { Cmd: inGroup, User: 'nobody' })).output).toMatch(/^\d+:pids:\/\nlisted\n$/);
    // The container (bwrap and sleep) and this exec (bwrap and sh) hold 4 of the 6: the third sleep cannot start.
    const { output } = await execOutput(id, { Cmd: ['sh', '-c', 'for i in 1 2 3 4; do sleep 30 </dev/null >/dev/null 2>&1 & done'] });
    expect(output).toContain('can\'t fork');
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
  test('an exec in a limited container keeps its Env as given (the cgroup joiner drops nothing)', async () => {
    const id = await running({ HostConfig: { PidsLimit: 50 } });
    const { output } = await execOutput(id, { Cmd: ['env'], Env: ['spring.profiles.active=dev'] });
    expect(output).toContain('spring.profiles.active=dev\n');
    expect(output).not.toMatch(/^(SHLVL|OLDPWD)=/m);
    await request(app!).delete(`/v1.42/containers/${id}?force=1`);
  });
});

describeWithPeers('sandbox docker diff: the container\'s root filesystem against its image\'s', [peers], () => {
  test('added, modified and deleted paths, sorted, with dockerd\'s kinds; a container that never ran has none (null)', async () => {
    const created = await request(app!).post('/v1.42/containers/create').send({ Image: 'busybox', Cmd: ['sh', '-c', 'mkdir /made; echo x > /made/file; rm /etc/group; echo more >> /etc/passwd'] });
    expect((await request(app!).get(`/v1.42/containers/${created.body.Id}/changes`)).body).toBeNull();
    await request(app!).post(`/v1.42/containers/${created.body.Id}/start`);
    await request(app!).post(`/v1.42/containers/${created.body.Id}/wait`);
    const changes = (await request(app!).get(`/v1.42/containers/${created.body.Id}/changes`)).body as { Path: string; Kind: number }[];
    expect(changes).toEqual(expect.arrayContaining([
      { Path: '/made', Kind: 1 }, { Path: '/made/file', Kind: 1 }, { Path: '/etc/group', Kind: 2 }, { Path: '/etc/passwd', Kind: 0 }, { Path: '/etc', Kind: 0 },
    ]));
    expect(changes.map((c) => c.Path)).toEqual([...changes.map((c) => c.Path)].sort());
    await request(app!).delete(`/v1.42/containers/${created.body.Id}`);
  });
});
