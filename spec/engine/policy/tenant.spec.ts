import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CAPABILITIES, tenantPolicy } from '../../../lib/engine/index.js';
import { processRuntime } from '../../../lib/engine/runtime/process/index.js';
import { admin, as, policyApp, policyRuntime } from './support.js';

const runtime = policyRuntime();
const shared = mkdtempSync(join(tmpdir(), 'dockgate-allowed-'));
mkdirSync(join(shared, 'data'));
symlinkSync('/', join(shared, 'up'));
const app = policyApp(runtime, tenantPolicy({ admin, allowedBindDirs: [shared] }));
afterAll(async () => {
  await runtime.close?.();
  rmSync(shared, { recursive: true, force: true });
});

const create = (user: string, body: Record<string, unknown>) => as(app, user).post('/v1.41/containers/create').send({ Image: 'busybox', ...body });

describe('a tenant may not create what reaches the host: 403 naming the field', () => {
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ['-v /:/host', { HostConfig: { Binds: ['/:/host'] } }, /^HostConfig\.Binds: binding the host path \/ is for administrators/],
    ['-v /etc:/x:ro', { HostConfig: { Binds: ['/etc:/x:ro'] } }, /^HostConfig\.Binds: .*\/etc/],
    ['-v ALLOWED/../../etc:/x', { HostConfig: { Binds: [`${shared}/../../etc:/x`] } }, /^HostConfig\.Binds: /],
    ['-v ALLOWED/up/etc:/x (a symlink out of the allowed directory)', { HostConfig: { Binds: [`${shared}/up/etc:/x`] } }, /^HostConfig\.Binds: /],
    ['--mount type=bind,src=/', { HostConfig: { Mounts: [{ Type: 'bind', Source: '/', Target: '/host' }] } }, /^HostConfig\.Mounts: binding the host path \//],
    ['--mount a volume with bind driver options', { HostConfig: { Mounts: [{ Type: 'volume', Source: 'v', Target: '/v', VolumeOptions: { DriverConfig: { Name: 'local', Options: { type: 'none', o: 'bind', device: '/' } } } }] } }, /^HostConfig\.Mounts: VolumeOptions\.DriverConfig/],
    ['--privileged', { HostConfig: { Privileged: true } }, /^HostConfig\.Privileged: /],
    ['--network host', { HostConfig: { NetworkMode: 'host' } }, /^HostConfig\.NetworkMode: /],
    ['--network host (endpoint)', { NetworkingConfig: { EndpointsConfig: { host: {} } } }, /^NetworkingConfig\.EndpointsConfig: /],
    ['--pid host', { HostConfig: { PidMode: 'host' } }, /^HostConfig\.PidMode: /],
    ['--ipc host', { HostConfig: { IpcMode: 'host' } }, /^HostConfig\.IpcMode: /],
    ['--uts host', { HostConfig: { UTSMode: 'host' } }, /^HostConfig\.UTSMode: /],
    ['--userns host', { HostConfig: { UsernsMode: 'host' } }, /^HostConfig\.UsernsMode: /],
    ['--cgroupns host', { HostConfig: { CgroupnsMode: 'host' } }, /^HostConfig\.CgroupnsMode: /],
    ['--cap-add SYS_ADMIN', { HostConfig: { CapAdd: ['SYS_ADMIN'] } }, /^HostConfig\.CapAdd: SYS_ADMIN is beyond Docker's default capabilities/],
    ['--cap-add cap_net_admin', { HostConfig: { CapAdd: ['cap_net_admin'] } }, /^HostConfig\.CapAdd: NET_ADMIN/],
    ['--cap-add ALL', { HostConfig: { CapAdd: ['ALL'] } }, /^HostConfig\.CapAdd: ALL/],
    ['--device /dev/sda', { HostConfig: { Devices: [{ PathOnHost: '/dev/sda', PathInContainer: '/dev/sda', CgroupPermissions: 'rwm' }] } }, /^HostConfig\.Devices: /],
    ['--gpus all', { HostConfig: { DeviceRequests: [{ Count: -1, Capabilities: [['gpu']] }] } }, /^HostConfig\.DeviceRequests: /],
    ['--device-cgroup-rule', { HostConfig: { DeviceCgroupRules: ['c 1:3 rwm'] } }, /^HostConfig\.DeviceCgroupRules: /],
    ['--security-opt seccomp=unconfined', { HostConfig: { SecurityOpt: ['seccomp=unconfined'] } }, /^HostConfig\.SecurityOpt: seccomp=unconfined loosens confinement/],
    ['--security-opt seccomp=PROFILE', { HostConfig: { SecurityOpt: ['seccomp={"defaultAction":"SCMP_ACT_ALLOW"}'] } }, /^HostConfig\.SecurityOpt: seccomp=/],
    ['--security-opt apparmor=unconfined', { HostConfig: { SecurityOpt: ['apparmor=unconfined'] } }, /^HostConfig\.SecurityOpt: apparmor=unconfined/],
    ['--security-opt label=disable', { HostConfig: { SecurityOpt: ['label=disable'] } }, /^HostConfig\.SecurityOpt: label=disable/],
    ['--security-opt label:disable (old spelling)', { HostConfig: { SecurityOpt: ['label:disable'] } }, /^HostConfig\.SecurityOpt: label:disable/],
    ['--security-opt label=type:spc_t', { HostConfig: { SecurityOpt: ['label=type:spc_t'] } }, /^HostConfig\.SecurityOpt: label=type:spc_t/],
    ['--security-opt systempaths=unconfined', { HostConfig: { SecurityOpt: ['systempaths=unconfined'] } }, /^HostConfig\.SecurityOpt: systempaths=unconfined/],
    ['--sysctl kernel.shm_rmid_forced=1', { HostConfig: { Sysctls: { 'kernel.shm_rmid_forced': '1' } } }, /^HostConfig\.Sysctls: /],
    ['--cgroup-parent', { HostConfig: { CgroupParent: '/' } }, /^HostConfig\.CgroupParent: /],
    ['--runtime runc', { HostConfig: { Runtime: 'runc' } }, /^HostConfig\.Runtime: /],
    ['MaskedPaths: [] (unmasks every path)', { HostConfig: { MaskedPaths: [] as string[] } }, /^HostConfig\.MaskedPaths: /],
    ['ReadonlyPaths: []', { HostConfig: { ReadonlyPaths: [] as string[] } }, /^HostConfig\.ReadonlyPaths: /],
    ['--oom-kill-disable', { HostConfig: { OomKillDisable: true } }, /^HostConfig\.OomKillDisable: /],
    ['--oom-score-adj -1000', { HostConfig: { OomScoreAdj: -1000 } }, /^HostConfig\.OomScoreAdj: /],
    ['--log-driver syslog (the engine connects to an address of the tenant\'s choosing)', { HostConfig: { LogConfig: { Type: 'syslog', Config: { 'syslog-address': 'tcp://127.0.0.1:6379' } } } }, /^HostConfig\.LogConfig: the syslog log driver/],
    ['--volume-driver a plugin', { HostConfig: { VolumeDriver: 'sshfs' } }, /^HostConfig\.VolumeDriver: /],
    ['--mount a volume of a plugin driver', { HostConfig: { Mounts: [{ Type: 'volume', Source: 'v', Target: '/v', VolumeOptions: { DriverConfig: { Name: 'sshfs' } } }] } }, /^HostConfig\.Mounts: the sshfs volume driver/],
    ['-p 80:80 (a privileged host port)', { HostConfig: { PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '80' }] } } }, /^HostConfig\.PortBindings: host port 80/],
  ];
  test.each(refused)('%s', async (_flag, body, message) => {
    const res = await create('bob', body);
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(message);
  });

  test('an administrator may use every one of them (the policy lets them through to the runtime)', async () => {
    for (const [flag, body] of refused) {
      const res = await create('root', body);
      expect({ flag, status: res.status }).not.toEqual({ flag, status: 403 });
    }
  });
});

describe('what stays inside is allowed to tenants', () => {
  test.each([
    ['a bind under an allowed directory', { HostConfig: { Binds: [`${shared}/data:/data`] } }],
    ['the allowed directory itself', { HostConfig: { Mounts: [{ Type: 'bind', Source: shared, Target: '/s' }] } }],
    ['a named volume', { HostConfig: { Binds: ['cache:/cache'] } }],
    ['a tmpfs mount', { HostConfig: { Mounts: [{ Type: 'tmpfs', Target: '/t' }] } }],
    ["--cap-add of Docker's defaults (after a --cap-drop ALL)", { HostConfig: { CapDrop: ['ALL'], CapAdd: [...DEFAULT_CAPABILITIES] } }],
    ['--security-opt no-new-privileges', { HostConfig: { SecurityOpt: ['no-new-privileges'] } }],
    ['--network none, bridge', { HostConfig: { NetworkMode: 'none' } }],
    ['-p 8080:80', { HostConfig: { PortBindings: { '80/tcp': [{ HostPort: '8080' }] } } }],
    ['--log-driver json-file', { HostConfig: { LogConfig: { Type: 'json-file', Config: { 'max-size': '1m' } } } }],
  ])('%s', async (_what, body) => {
    const res = await create('bob', body);
    expect(res.status).not.toBe(403);
  });
});

describe('a tenant\'s body is judged as dockerd decodes it: keys in any case (Go\'s encoding/json) are the same fields', () => {
  test.each([
    ['hostconfig.privileged', { hostconfig: { privileged: true } }, /^HostConfig\.Privileged: /],
    ['HostConfig.PRIVILEGED', { HostConfig: { PRIVILEGED: true } }, /^HostConfig\.Privileged: /],
    ['a bind mount of / in lower case', { HostConfig: { Mounts: [{ type: 'bind', source: '/', target: '/host' }] } }, /^HostConfig\.Mounts: binding the host path \//],
    ['binds in lower case', { hostConfig: { binds: ['/:/host'] } }, /^HostConfig\.Binds: binding the host path \//],
    ['a privileged port in lower case', { HostConfig: { portbindings: { '80/tcp': [{ hostport: '80' }] } } }, /^HostConfig\.PortBindings: host port 80/],
  ])('%s is refused, naming the field', async (_what, body, message) => {
    const res = await create('bob', body);
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(message);
  });

  test('the later of two spellings of one field wins, as in Go', async () => {
    expect((await create('bob', { HostConfig: { privileged: true, Privileged: false } })).status).not.toBe(403);
    expect((await create('bob', { HostConfig: { Privileged: false, privileged: true } })).status).toBe(403);
  });
});

describe('execs and volumes cannot reach the host either', () => {
  test('exec --privileged is refused naming Privileged', async () => {
    const id = (await create('bob', {})).body.Id as string;
    const res = await as(app, 'bob').post(`/v1.41/containers/${id}/exec`).send({ Cmd: ['sh'], Privileged: true });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: 'Privileged: privileged execs are for administrators' });
  });

  test('the policy judges the exec body as the runtime reads it: "privileged" in another case (Go\'s decode takes it) is refused too', async () => {
    const id = (await create('bob', {})).body.Id as string;
    for (const key of ['privileged', 'PRIVILEGED']) {
      const res = await as(app, 'bob').post(`/v1.41/containers/${id}/exec`).send({ Cmd: ['sh'], [key]: true });
      expect([res.status, res.body]).toEqual([403, { message: 'Privileged: privileged execs are for administrators' }]);
    }
  });

  test('a volume with driver options (-o type=none -o o=bind -o device=/) is refused naming DriverOpts; volume prune is the administrators\'', async () => {
    const res = await as(app, 'bob').post('/v1.41/volumes/create').send({ Name: 'rootfs', DriverOpts: { type: 'none', o: 'bind', device: '/' } });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/^DriverOpts: /);
    expect((await as(app, 'bob').post('/v1.41/volumes/prune')).body).toEqual({ message: 'pruning volumes is for administrators' });
    expect((await as(app, 'bob').post('/v1.41/volumes/create').send({ Name: 'remote', Driver: 'sshfs' })).body).toEqual({ message: 'Driver: the sshfs volume driver is for administrators' });
  });
});

describe('the process runtime cannot contain a tenant', () => {
  const proc = processRuntime({ images: { 'busybox:*': { program: '/bin/busybox' } } });
  const procApp = policyApp(proc, tenantPolicy({ admin }));
  afterAll(() => proc.close?.());

  test('a tenant\'s create is refused saying why; an administrator\'s goes through', async () => {
    const res = await as(procApp, 'bob').post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['true'] });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/^the process runtime cannot contain a tenant: it runs commands on the host/);
    const byAdmin = await as(procApp, 'root').post('/v1.41/containers/create').send({ Image: 'busybox', Cmd: ['true'] });
    expect(byAdmin.status).toBe(201);
  });
});

describe('tenantPolicy options are checked at construction', () => {
  test('allowedBindDirs must be absolute', () => {
    expect(() => tenantPolicy({ allowedBindDirs: ['relative/dir'] })).toThrow(/"allowedBindDirs" must be a list of absolute directories/);
    expect(() => tenantPolicy({ admin: 'root' as never })).toThrow(/"admin" must be a function/);
  });
});
