import { describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceLimits } from '../../../lib/engine/runtime/sandbox/resource-limits.js';
import { containerSpecOf } from '../../../lib/engine-api/container-spec.js';
import { controllersFor } from '../../../lib/engine/linux/cgroup-limits.js';
import { Cgroups } from '../../../lib/engine/linux/cgroups.js';

const body = (host: Record<string, unknown>) => containerSpecOf({ Image: 'busybox', HostConfig: host });
const MiB = 1024 * 1024;

describe('resource limits are read from HostConfig the way dockerd reads them', () => {
  test('the Docker CLI\'s zero values (and -1) mean no limit', () => {
    expect(resourceLimits(body({ Memory: 0, MemorySwap: 0, NanoCpus: 0, CpuShares: 0, CpuQuota: 0, CpuPeriod: 0, PidsLimit: null }), 2)).toEqual({});
    expect(resourceLimits(body({ PidsLimit: -1 }), 2)).toEqual({});
    expect(resourceLimits(body({ MemorySwap: -1 }), 2)).toEqual({});
    expect(controllersFor({})).toEqual([]);
  });
  test('Memory alone gets as much swap again (dockerd\'s default); MemorySwap -1 is unlimited swap', () => {
    expect(resourceLimits(body({ Memory: 64 * MiB }), 2)).toEqual({ memory: 64 * MiB, memorySwap: 128 * MiB });
    expect(resourceLimits(body({ Memory: 64 * MiB, MemorySwap: -1 }), 2)).toEqual({ memory: 64 * MiB, memorySwap: -1 });
  });
  test('NanoCpus becomes a CFS quota per 100 ms period; CpuQuota/CpuPeriod are taken as given', () => {
    expect(resourceLimits(body({ NanoCpus: 500_000_000 }), 2).cpu).toEqual({ quota: 50_000, period: 100_000 });
    expect(resourceLimits(body({ CpuQuota: 20_000, CpuPeriod: 50_000 }), 2).cpu).toEqual({ quota: 20_000, period: 50_000 });
    expect(resourceLimits(body({ CpuPeriod: 50_000 }), 2).cpu).toEqual({ quota: -1, period: 50_000 });
  });
  test('CpuShares and PidsLimit pass through; each limit names its controller', () => {
    const limits = resourceLimits(body({ CpuShares: 512, PidsLimit: 10, Memory: 8 * MiB }), 2);
    expect(limits).toMatchObject({ cpuShares: 512, pids: 10 });
    expect(controllersFor(limits).sort()).toEqual(['cpu', 'memory', 'pids']);
  });
});

describe('limits dockerd refuses are refused with its messages (400)', () => {
  const refused = (host: Record<string, unknown>, cpus = 2): string => {
    try {
      resourceLimits(body(host), cpus);
    } catch (error) {
      expect((error as { status?: number }).status).toBe(400);
      return (error as Error).message;
    }
    throw new Error('not refused');
  };
  test('memory below 6 MB, swap below memory, swap without memory', () => {
    expect(refused({ Memory: 1 * MiB })).toBe('Minimum memory limit allowed is 6MB');
    expect(refused({ Memory: 64 * MiB, MemorySwap: 32 * MiB })).toBe('Minimum memoryswap limit should be larger than memory limit, see usage');
    expect(refused({ MemorySwap: 64 * MiB })).toBe('You should always set the Memory limit when using Memoryswap limit');
  });
  test('NanoCpus beyond the machine or beside CpuQuota/CpuPeriod', () => {
    expect(refused({ NanoCpus: 3e9 }, 2)).toBe('Range of CPUs is from 0.01 to 2.00, as there are only 2 CPUs available');
    expect(refused({ NanoCpus: 1e9, CpuQuota: 50_000 })).toBe('Conflicting options: Nano CPUs and CPU Quota cannot both be set');
    expect(refused({ NanoCpus: 1e9, CpuPeriod: 50_000 })).toBe('Conflicting options: Nano CPUs and CPU Period cannot both be set');
  });
  test('a CFS period or quota out of range, shares out of range, a value that is not an integer', () => {
    expect(refused({ CpuPeriod: 10 })).toMatch(/CPU cfs period can not be less than 1ms/);
    expect(refused({ CpuQuota: 10 })).toMatch(/CPU cfs quota can not be less than 1ms/);
    expect(refused({ CpuShares: 1 })).toBe('HostConfig.CpuShares must be between 2 and 262144');
    expect(refused({ Memory: '64m' })).toBe('HostConfig.Memory must be an integer');
  });
});

describe('cgroup v1 hierarchies are found from mountinfo and the process\'s own groups', () => {
  test('a controller mounted and owned is managed under <mount><own path>/dockgate; others are not', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dockgate-cg-'));
    const proc = join(root, 'proc');
    mkdirSync(proc);
    const memory = join(root, 'memory');
    mkdirSync(join(memory, 'app'), { recursive: true });
    writeFileSync(join(proc, 'mountinfo'), [
      `30 25 0:26 / ${memory} rw,relatime shared:10 - cgroup cgroup rw,memory`,
      `31 25 0:27 / ${join(root, 'nowhere')}\\040x rw - cgroup2 cgroup2 rw`,
    ].join('\n'));
    writeFileSync(join(proc, 'cgroup'), '4:memory:/app\n2:pids:/\n0::/\n');
    const cgroups = Cgroups.detect(proc);
    expect(cgroups.controllers).toEqual(['memory']);
    const group = cgroups.create('c1', { memory: 8 * MiB });
    expect(group.procs).toEqual([join(memory, 'app', 'dockgate', 'c1', 'cgroup.procs')]);
    expect(() => cgroups.create('c2', { pids: 5 })).toThrow('the pids cgroup is not manageable on this server');
    // make(): the same groups and limits, their directories made off the event loop; nothing made for a refused one.
    const made = await cgroups.make('c3', { memory: 8 * MiB });
    expect(made.procs).toEqual([join(memory, 'app', 'dockgate', 'c3', 'cgroup.procs')]);
    expect(readFileSync(join(memory, 'app', 'dockgate', 'c3', 'memory.limit_in_bytes'), 'utf8')).toBe(String(8 * MiB));
    await expect(cgroups.make('c4', { memory: 8 * MiB, pids: 5 })).rejects.toThrow('the pids cgroup is not manageable on this server');
    expect(existsSync(join(memory, 'app', 'dockgate', 'c4'))).toBe(false);
  });
});
