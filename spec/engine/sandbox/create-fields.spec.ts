import { test, expect } from '@jest/globals';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { Cgroups } from '../../../lib/engine/linux/cgroups.js';
import { describeWithPeers, type PeerCheck } from '../../support/peers.js';
import { bwrap, hasBwrap, sandboxOnSocket } from '../sandbox-socket.js';

const controllers = hasBwrap ? Cgroups.detect().controllers : [];
const cgroup = (name: string): PeerCheck => ({ name: `the ${name} cgroup (v1), manageable by this user`, available: () => controllers.includes(name as never) });
const { call, run } = sandboxOnSocket('dockgate-fields');
const refused = async (body: object): Promise<string> => {
  const r = await call('POST', '/containers/create', { Image: 'busybox', Cmd: ['true'], ...body });
  expect(r.status).toBe(400);
  return r.json.message as string;
};

describeWithPeers('sandbox create fields: CpusetCpus and CpusetMems through the cpuset cgroup, in dockerd\'s words when unavailable', [bwrap, cgroup('cpuset')], () => {
  test('CpusetCpus is the container\'s cpuset.cpus; CPUs the server lacks are refused as dockerd refuses them', async () => {
    expect(await run({ Cmd: ['cat', '/sys/fs/cgroup/cpuset/cpuset.cpus'], HostConfig: { CpusetCpus: '0' } })).toMatchObject({ code: 0, out: '0\n' });
    expect(await refused({ HostConfig: { CpusetCpus: '4096' } })).toMatch(/^Requested CPUs are not available - requested 4096, available: /);
    expect(await refused({ HostConfig: { CpusetMems: '64' } })).toMatch(/^Requested memory nodes are not available - requested 64, available: /);
  });
});

describeWithPeers('sandbox create fields: MemorySwappiness through the memory cgroup', [bwrap, cgroup('memory')], () => {
  test('MemorySwappiness is the container\'s memory.swappiness; out of 0-100 is refused in dockerd\'s words; -1 is unset', async () => {
    expect(await run({ Cmd: ['cat', '/sys/fs/cgroup/memory/memory.swappiness'], HostConfig: { MemorySwappiness: 10 } })).toMatchObject({ code: 0, out: '10\n' });
    expect(await refused({ HostConfig: { MemorySwappiness: 101 } })).toBe('Invalid value: 101, valid memory swappiness range is 0-100');
    expect((await call('POST', '/containers/create', { Image: 'busybox', Cmd: ['true'], HostConfig: { MemorySwappiness: -1 } })).status).toBe(201);
  });
});

describeWithPeers('sandbox create fields: namespace modes, groups, devices, Runtime and MacAddress are honored or refused by name', [bwrap], () => {
  test('UTSMode host keeps the server\'s hostname; with a Hostname it conflicts as in dockerd', async () => {
    expect(await run({ Cmd: ['hostname'], HostConfig: { UTSMode: 'host' } })).toMatchObject({ code: 0, out: `${hostname()}\n` });
    expect(await refused({ Hostname: 'x', HostConfig: { UTSMode: 'host' } })).toBe('conflicting options: hostname and the UTS mode');
    expect(await refused({ HostConfig: { UTSMode: 'bogus' } })).toBe('invalid UTS mode: bogus');
  });
  test('IpcMode host shares the server\'s IPC namespace; private is every container\'s own', async () => {
    expect((await run({ Cmd: ['readlink', '/proc/self/ns/ipc'], HostConfig: { IpcMode: 'host' } })).out).toBe(`${readlinkSync('/proc/self/ns/ipc')}\n`);
    expect((await run({ Cmd: ['readlink', '/proc/self/ns/ipc'], HostConfig: { IpcMode: 'private' } })).out).not.toBe(`${readlinkSync('/proc/self/ns/ipc')}\n`);
  });
  test('PidMode and IpcMode of another container, and PidMode host, are refused naming the field and why', async () => {
    expect(await refused({ HostConfig: { PidMode: 'container:abc' } })).toBe('HostConfig.PidMode "container:abc": joining another container\'s PID namespace is not supported by the sandbox runtime (each container gets its own)');
    expect(await refused({ HostConfig: { IpcMode: 'container:abc' } })).toContain('HostConfig.IpcMode "container:abc"');
    expect(await refused({ HostConfig: { PidMode: 'host' } })).toMatch(/^HostConfig\.PidMode "host" is not supported by the sandbox runtime, administrators included: .*neither mount the host's \/proc nor signal or trace host processes/);
    expect(await refused({ HostConfig: { PidMode: 'bogus' } })).toBe('invalid PID mode: bogus');
  });
  test('GroupAdd: an unknown name in dockerd\'s words; known names and numbers are the process\'s supplementary groups, after its own gid; DeviceCgroupRules refused naming it', async () => {
    expect(await refused({ HostConfig: { GroupAdd: ['nosuch'] } })).toBe('Unable to find group nosuch: no matching entries in group file');
    expect(await run({ Cmd: ['cat', '/proc/self/status'], HostConfig: { GroupAdd: ['root', '4321'] } })).toMatchObject({ code: 0, out: expect.stringMatching(/^Groups:\t0 4321 ?$/m) });
    expect(await refused({ HostConfig: { DeviceCgroupRules: ['c 1:3 rwm'] } })).toContain('HostConfig.DeviceCgroupRules is not supported by the sandbox runtime');
  });
  test('Runtime: the OCI name clients know (runc) and this runtime\'s own name are accepted and shown by inspect as asked, runc when nothing is; another is unknown in dockerd\'s words; MacAddress is refused by name', async () => {
    for (const [asked, shown] of [['sandbox', 'sandbox'], ['runc', 'runc'], [undefined, 'runc']] as const) {
      const created = await call('POST', '/containers/create', { Image: 'busybox', Cmd: ['true'], HostConfig: asked ? { Runtime: asked } : {} });
      expect(created.status).toBe(201);
      expect((await call('GET', `/containers/${created.json.Id}/json`)).json.HostConfig.Runtime).toBe(shown);
    }
    expect(await refused({ HostConfig: { Runtime: 'crun' } })).toBe('Unknown runtime specified crun');
    expect(await refused({ MacAddress: '02:42:ac:11:00:09' })).toContain('MacAddress is not supported by the sandbox runtime');
  });
  test('StopTimeout is what stop waits without a t: a container ignoring SIGTERM is killed after it', async () => {
    const created = await call('POST', '/containers/create', { Image: 'busybox', Cmd: ['sh', '-c', 'trap "" TERM; sleep 30'], StopTimeout: 1 });
    const id = created.json.Id as string;
    expect((await call('POST', `/containers/${id}/start`)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    expect((await call('POST', `/containers/${id}/stop`)).status).toBe(204);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(5000);
    expect((await call('GET', `/containers/${id}/json`)).json.Config.StopTimeout).toBe(1);
  });
});
