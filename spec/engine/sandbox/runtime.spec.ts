import { test, expect, afterAll } from '@jest/globals';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { FrameDecoder } from '../../../lib/engine/index.js';
import { sandboxRuntime } from '../../../lib/engine/runtime/sandbox/index.js';
import { listenOnSocket, socketRequest } from '../helpers.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';

const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');
const bwrap: PeerCheck = { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap };
const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const stateDir = mkdtempSync(join(tmpdir(), 'dockgate-sandbox-spec-'));
const runtime = hasBwrap ? sandboxRuntime({ stateDir, maxLogBytes: 64 * 1024 }) : undefined;
const listening = runtime ? listenOnSocket(runtime) : undefined;
afterAll(async () => {
  await runtime?.close?.();
  await (await listening)?.close();
});

async function create(body: object): Promise<{ status: number; json: { Id?: string; message?: string } }> {
  const { socket } = (await listening)!;
  const res = await socketRequest(socket, 'POST', '/v1.28/containers/create', { Image: 'busybox', ...body });
  return { status: res.status, json: JSON.parse(res.body.toString()) };
}

async function run(cmd: string[], extra: object = {}): Promise<{ id: string; code: number; out: string; err: string }> {
  const { socket } = (await listening)!;
  const created = await create({ Cmd: cmd, ...extra });
  expect(created.status).toBe(201);
  const id = created.json.Id!;
  expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`)).status).toBe(204);
  const wait = JSON.parse((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/wait`)).body.toString());
  const logs = await socketRequest(socket, 'GET', `/v1.28/containers/${id}/logs?stdout=1&stderr=1`);
  const frames = new FrameDecoder().push(logs.body);
  const pick = (s: number): string => frames.filter((f) => f.stream === s).map((f) => f.payload.toString()).join('');
  return { id, code: wait.StatusCode, out: pick(1), err: pick(2) };
}

d('sandbox runtime: the container never sees the host filesystem', () => {
  test('the host /etc/shadow does not exist inside', async () => {
    const r = await run(['cat', '/etc/shadow']);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/No such file/);
  });
  test('writes stay in the container: another container does not see them', async () => {
    expect((await run(['sh', '-c', 'echo x > /written && cat /written'])).out).toBe('x\n');
    expect((await run(['sh', '-c', 'test -e /written && echo seen || echo absent'])).out).toBe('absent\n');
  });
  test('removing a container deletes its root filesystem copy', async () => {
    const { socket } = (await listening)!;
    const r = await run(['true']);
    const dir = join(stateDir, 'containers', r.id);
    expect(existsSync(dir)).toBe(true);
    expect((await socketRequest(socket, 'DELETE', `/v1.28/containers/${r.id}`)).status).toBe(204);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(dir)).toBe(false);
  });
  test('ReadonlyRootfs makes / read-only', async () => {
    const r = await run(['touch', '/x'], { HostConfig: { ReadonlyRootfs: true } });
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/Read-only/i);
  });
});

d('sandbox runtime: own PID and UTS namespaces, User and Hostname honored', () => {
  test('without Init the command is pid 1 of its own PID namespace (as dockerd) and sees no host process', async () => {
    const r = await run(['sh', '-c', 'echo $$; ls -d /proc/[0-9]* | wc -l']);
    expect(r.out.split('\n')[0]).toBe('1');
    expect(Number(r.out.split('\n')[1])).toBeLessThanOrEqual(4);
  });
  test('with HostConfig.Init pid 1 is a reaping init and the command is pid 2', async () => {
    const r = await run(['sh', '-c', 'echo $$'], { HostConfig: { Init: true } });
    expect(r.out).toBe('2\n');
  });
  test('with Init a stop signal reaches the command (its trap runs)', async () => {
    const { socket } = (await listening)!;
    const created = await create({ Cmd: ['sh', '-c', 'trap "echo got-term; exit 3" TERM; while true; do sleep 0.1; done'], HostConfig: { Init: true } });
    const id = created.json.Id!;
    await socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`);
    await new Promise((r) => setTimeout(r, 300));
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/stop?t=5`)).status).toBe(204);
    const state = JSON.parse((await socketRequest(socket, 'GET', `/v1.28/containers/${id}/json`)).body.toString()).State;
    expect(state.ExitCode).toBe(3);
  });
  test('User uid:gid is the identity inside', async () => {
    expect((await run(['id'], { User: '1000:1000' })).out).toBe('uid=1000(user) gid=1000(user) groups=1000(user)\n');
  });
  test('a numeric uid with a passwd entry takes its primary group; one without runs with gid 0 (runc)', async () => {
    expect((await run(['id'], { User: '1000' })).out).toBe('uid=1000(user) gid=1000(user) groups=1000(user)\n');
    expect((await run(['id'], { User: '4242' })).out).toBe('uid=4242 gid=0(root) groups=0(root)\n');
  });
  test('User names come from the image\'s /etc/passwd and /etc/group', async () => {
    expect((await run(['id'], { User: 'nobody' })).out).toBe('uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)\n');
    expect((await run(['id'], { User: 'user:nogroup' })).out).toBe('uid=1000(user) gid=65534(nogroup) groups=65534(nogroup)\n');
    expect((await run(['sh', '-c', 'echo $HOME'], { User: 'user' })).out).toBe('/home/user\n');
  });
  test('Hostname is the UTS hostname', async () => {
    expect((await run(['hostname'], { Hostname: 'boxy' })).out).toBe('boxy\n');
  });
  test('NetworkMode none leaves only loopback', async () => {
    const r = await run(['sh', '-c', 'ls /sys/class/net 2>/dev/null || cat /proc/net/dev'], { HostConfig: { NetworkMode: 'none' } });
    expect(r.out).not.toMatch(/eth0|ens|enp/);
  });
  test('Env and WorkingDir are applied', async () => {
    expect((await run(['sh', '-c', 'echo $GREETING; pwd'], { Env: ['GREETING=hi'], WorkingDir: '/tmp' })).out).toBe('hi\n/tmp\n');
  });
});

d('sandbox runtime: Binds, Mounts, Tmpfs and capabilities', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dockgate-bind-'));
  // Container root is an unprivileged host uid (the user namespace): the directory is opened to
  // it, as a bind for dockerd's userns-remap must be.
  chmodSync(dir, 0o777);
  writeFileSync(join(dir, 'hello'), 'from host\n');
  test('a ro bind is readable and not writable', async () => {
    const r = await run(['sh', '-c', 'cat /data/hello; touch /data/new'], { HostConfig: { Binds: [`${dir}:/data:ro`] } });
    expect(r.out).toBe('from host\n');
    expect(r.err).toMatch(/Read-only/i);
    expect(existsSync(join(dir, 'new'))).toBe(false);
  });
  test('a rw bind Mount writes through to the host', async () => {
    const r = await run(['sh', '-c', 'echo back > /data/back'], { HostConfig: { Mounts: [{ Type: 'bind', Source: dir, Target: '/data' }] } });
    expect(r.code).toBe(0);
    expect(readFileSync(join(dir, 'back'), 'utf8')).toBe('back\n');
  });
  test('Tmpfs mounts an empty tmpfs at the path', async () => {
    const r = await run(['sh', '-c', 'grep " /scratch " /proc/mounts'], { HostConfig: { Tmpfs: { '/scratch': '' } } });
    expect(r.out).toMatch(/^tmpfs \/scratch tmpfs/);
  });
  test('the default capability set is dockerd\'s, and CapDrop ALL empties it', async () => {
    expect((await run(['grep', 'CapEff', '/proc/self/status'])).out).toBe('CapEff:\t00000000a80425fb\n');
    expect((await run(['grep', 'CapEff', '/proc/self/status'], { HostConfig: { CapDrop: ['ALL'] } })).out).toBe('CapEff:\t0000000000000000\n');
  });
});

d('sandbox runtime: stop takes down the whole process tree', () => {
  test('kill of a shell with background sleeps leaves no sleep behind', async () => {
    const { socket } = (await listening)!;
    const created = await create({ Cmd: ['sh', '-c', 'sleep 1234 & sleep 1234 & wait'] });
    const id = created.json.Id!;
    await socketRequest(socket, 'POST', `/v1.28/containers/${id}/start`);
    await new Promise((r) => setTimeout(r, 300));
    expect(spawnSync('pgrep', ['-f', 'sleep 1234']).stdout.toString().trim()).not.toBe('');
    expect((await socketRequest(socket, 'POST', `/v1.28/containers/${id}/kill`)).status).toBe(204);
    await socketRequest(socket, 'POST', `/v1.28/containers/${id}/wait`);
    await new Promise((r) => setTimeout(r, 300));
    expect(spawnSync('pgrep', ['-f', 'sleep 1234']).stdout.toString().trim()).toBe('');
  });
});

d('sandbox runtime: isolation fields it cannot honor are refused with a 400 naming the field', () => {
  for (const [field, value] of [['MemoryReservation', 1 << 26], ['Privileged', true], ['Devices', [{ PathOnHost: '/dev/sda' }]], ['SecurityOpt', ['apparmor=unconfined']], ['PortBindings', { '80/sctp': [{ HostPort: '8080' }] }], ['CpuRealtimeRuntime', 950000], ['BlkioWeight', 300]] as const) {
    test(`HostConfig.${field}`, async () => {
      const r = await create({ Cmd: ['true'], HostConfig: { [field]: value } });
      expect(r.status).toBe(400);
      expect(r.json.message).toContain(`HostConfig.${field}`);
    });
  }
  test('a Binds source that is neither an absolute path nor a volume name is refused in dockerd\'s words', async () => {
    const r = await create({ Cmd: ['true'], HostConfig: { Binds: ['./rel:/data'] } });
    expect(r.status).toBe(400);
    expect(r.json.message).toContain('"./rel" includes invalid characters for a local volume name');
  });
  test('a volume Mount without Source is an anonymous volume, as dockerd makes it; VolumeOptions it cannot honor are refused by name', async () => {
    const r = await create({ Cmd: ['true'], HostConfig: { Mounts: [{ Type: 'volume', Target: '/v' }] } });
    expect(r.status).toBe(201);
    const refused = await create({ Cmd: ['true'], HostConfig: { Mounts: [{ Type: 'volume', Target: '/v', VolumeOptions: { DriverConfig: { Name: 'x' } } }] } });
    expect(refused.status).toBe(400);
    expect(refused.json.message).toBe('HostConfig.Mounts.VolumeOptions.DriverConfig is not supported by the sandbox runtime');
  });
  test('a User name the image\'s /etc/passwd lacks is taken at create and refused at start, naming User and in dockerd\'s words', async () => {
    const r = await create({ Cmd: ['true'], User: 'daemon' });
    expect(r.status).toBe(201);
    const { socket } = (await listening)!;
    const started = await socketRequest(socket, 'POST', `/v1.28/containers/${r.json.Id!}/start`);
    expect(started.status).toBe(400);
    const message = (JSON.parse(started.body.toString()) as { message: string }).message;
    expect(message).toContain('User');
    expect(message).toContain('unable to find user daemon: no matching entries in passwd file');
  });
  test('a NetworkMode naming no network is taken at create and its start is 404 in dockerd\'s words (user networks need root: without it, refused naming NetworkMode)', async () => {
    const r = await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'nosuchnet' } });
    if (process.getuid?.() === 0) {
      expect(r.status).toBe(201);
      const { socket } = (await listening)!;
      const started = await socketRequest(socket, 'POST', `/v1.28/containers/${r.json.Id!}/start`);
      expect(started.status).toBe(404);
      expect(JSON.parse(started.body.toString())).toEqual({ message: 'network nosuchnet not found' });
    } else {
      expect(r.status).toBe(400);
      expect(r.json.message).toContain('NetworkMode');
    }
    const empty = await create({ Cmd: ['true'], HostConfig: { NetworkMode: 'container:' } });
    expect(empty.status).toBe(400);
    expect(empty.json.message).toContain('NetworkMode');
  });
});

d('sandboxRuntime options: a bad option or a missing bwrap throws at construction', () => {
  test('a missing bwrap names the Debian package', () => {
    expect(() => sandboxRuntime({ bwrap: '/nonexistent/bwrap' })).toThrow(/bubblewrap/);
  });
  test('a relative stateDir is a TypeError naming the option', () => {
    expect(() => sandboxRuntime({ stateDir: 'rel' })).toThrow(/"stateDir"/);
  });
});
