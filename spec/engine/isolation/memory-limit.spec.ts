import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { describeWithPeers } from '../../support/peers.js';
import { bwrap } from '../sandbox-socket.js';
import { tenantSandbox } from './support.js';

const d = (title: string, body: () => void) => describeWithPeers(title, [bwrap], body);
const { call, start, run } = tenantSandbox('dockgate-memory');
/** The same server where cgroups cannot be managed (option cgroups: false, as on a cgroup v2 host). */
const noCgroups = tenantSandbox('dockgate-memory-nocg', { runtime: { cgroups: false } });
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const LIMIT = 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || echo none';
/** A build context holding only a Dockerfile whose RUN step would run under the query's limits. */
const context = (): Buffer => spawnSync('sh', ['-c', 'd=$(mktemp -d) && printf "FROM busybox\\nRUN true\\n" > $d/Dockerfile && tar -C $d -c Dockerfile && rm -r $d']).stdout;

d('a tenant\'s container has a memory limit it cannot lift (sandbox defaultMemory 1 GiB, tenancyPolicy maxMemory 4 GiB)', () => {
  /** Whether this server manages the memory cgroup (else the default is not applied, and the spec says so). */
  const memoryCgroup = async () => (await call('alice', 'GET', '/info')).json.MemoryLimit === true;

  test('a container that asks for no memory limit gets the default, 1 GiB', async () => {
    if (!(await memoryCgroup())) return;
    expect(Number((await run('bob', { Cmd: ['sh', '-c', LIMIT] })).out.trim())).toBe(GiB);
    expect(Number((await run('bob', { Cmd: ['sh', '-c', LIMIT], HostConfig: { Memory: 0 } })).out.trim())).toBe(GiB);
  });
  test('a tenant may ask for less, or more up to maxMemory', async () => {
    if (!(await memoryCgroup())) return;
    expect(Number((await run('bob', { Cmd: ['sh', '-c', LIMIT], HostConfig: { Memory: 64 * MiB } })).out.trim())).toBe(64 * MiB);
    expect(Number((await run('bob', { Cmd: ['sh', '-c', LIMIT], HostConfig: { Memory: 2 * GiB } })).out.trim())).toBe(2 * GiB);
  });
  test('more than maxMemory, or unlimited swap, is a 403 naming the field, at create, build and update', async () => {
    const big = await call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Memory: 8 * GiB } });
    expect(big.status).toBe(403);
    expect(big.json.message).toContain('HostConfig.Memory');
    const swap = await call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Memory: 64 * MiB, MemorySwap: -1 } });
    expect(swap.status).toBe(403);
    expect(swap.json.message).toContain('HostConfig.MemorySwap');
    const built = await call('bob', 'POST', `/build?memory=${8 * GiB}`, context());
    expect(built.status).toBe(403);
    expect(built.json.message).toContain('HostConfig.Memory');
    const id = await start('bob', { Cmd: ['sleep', '30'] });
    const updated = await call('bob', 'POST', `/containers/${id}/update`, { Memory: 8 * GiB });
    expect(updated.status).toBe(403);
    expect(updated.json.message).toContain('HostConfig.Memory');
    await call('bob', 'DELETE', `/containers/${id}?force=1`);
  });
  test('where the memory cgroup cannot be managed, the default is left out: a tenant\'s container still runs, and asking for a limit is a 400 naming it', async () => {
    const plain = await noCgroups.run('bob', { Cmd: ['sh', '-c', LIMIT] });
    expect(plain).toMatchObject({ code: 0, out: 'none\n' });
    const asked = await noCgroups.call('bob', 'POST', '/containers/create', { Image: 'busybox', HostConfig: { Memory: 64 * MiB } });
    expect(asked.status).toBe(400);
    expect(asked.json.message).toContain('Memory');
  });
  test('the administrator may ask for more', async () => {
    if (!(await memoryCgroup())) return;
    expect(Number((await run('alice', { Cmd: ['sh', '-c', LIMIT], HostConfig: { Memory: 8 * GiB } })).out.trim())).toBe(8 * GiB);
  });
});
