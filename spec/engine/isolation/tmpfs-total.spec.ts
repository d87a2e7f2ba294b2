import { expect, test } from '@jest/globals';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call, run } = tenantSandbox('dockgate-tmpfs-total');
const MiB = 1024 * 1024;
const tmpfs = (n: number, options = ''): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`/t${i}`, options]));

d('the tmpfs mounts of a container are capped in total, not only each one (maxTmpfsBytes, 256 MiB by default)', () => {
  test('forty tmpfs mounts of the default size (2.5 GiB of memory) are a 400 naming HostConfig.Tmpfs', async () => {
    const created = await call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Tmpfs: tmpfs(40) } });
    expect(created.status).toBe(400);
    expect(created.json.message).toContain('HostConfig.Tmpfs');
    expect(created.json.message).toContain('maxTmpfsBytes');
  });
  test('Mounts of type tmpfs count too: three Tmpfs and two tmpfs Mounts of 64 MiB are refused', async () => {
    const Mounts = [{ Type: 'tmpfs', Target: '/m0', TmpfsOptions: { SizeBytes: 64 * MiB } }, { Type: 'tmpfs', Target: '/m1' }];
    const created = await call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Tmpfs: tmpfs(3), Mounts } });
    expect(created.status).toBe(400);
    expect(created.json.message).toContain('Mounts of type tmpfs');
  });
  test('mounts within the total run: four of the default size, or forty of 1 MiB', async () => {
    expect((await run('bob', { Cmd: ['true'], HostConfig: { Tmpfs: tmpfs(4) } })).code).toBe(0);
    const small = await run('bob', { Cmd: ['sh', '-c', 'grep -c " /t[0-9]* tmpfs" /proc/mounts'], HostConfig: { Tmpfs: tmpfs(40, 'size=1m') } });
    expect(small.out.trim()).toBe('40');
  });
});
