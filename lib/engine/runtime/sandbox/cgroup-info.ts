import type { Cgroups } from '../../linux/cgroups.js';

/**
 * What `docker info` says the sandbox can limit, truthfully: dockerd's capability fields
 * (MemoryLimit, CpuCfsQuota…) are true exactly for the limits this server honors through the
 * cgroup v1 controllers it found (linux/cgroups.ts), and false for those it refuses by name at create
 * (kernel memory, OOM-kill disabling, and real-time CPU, which dockerd's /info has no
 * field for: CpuRealtimePeriod/Runtime are refused like the rest). The warnings are dockerd's own
 * for a missing feature, so `docker info` prints them as it would.
 *
 * @example
 * cgroupInfo(Cgroups.detect()); // { MemoryLimit: true, …, CgroupDriver: 'cgroupfs', CgroupVersion: '1', Warnings: […] }
 */
export function cgroupInfo(cgroups: Cgroups | undefined): Record<string, unknown> {
  const controllers = new Set(cgroups?.controllers ?? []);
  const memory = controllers.has('memory');
  const cpu = controllers.has('cpu');
  const facts = {
    MemoryLimit: memory,
    SwapLimit: memory && cgroups!.swapAccounting,
    KernelMemory: false,
    KernelMemoryTCP: false,
    CpuCfsPeriod: cpu,
    CpuCfsQuota: cpu,
    CPUShares: cpu,
    CPUSet: controllers.has('cpuset'),
    PidsLimit: controllers.has('pids'),
    OomKillDisable: false,
  };
  const v1 = controllers.size > 0;
  const missing: [boolean, string][] = [
    [facts.MemoryLimit, 'WARNING: No memory limit support'],
    [facts.SwapLimit, 'WARNING: No swap limit support'],
    [facts.KernelMemory || !v1, 'WARNING: No kernel memory limit support'],
    [facts.KernelMemoryTCP || !v1, 'WARNING: No kernel memory TCP limit support'],
    [facts.OomKillDisable || !v1, 'WARNING: No oom kill disable support'],
    [facts.CpuCfsQuota, 'WARNING: No cpu cfs quota support'],
    [facts.CpuCfsPeriod, 'WARNING: No cpu cfs period support'],
    [facts.CPUShares, 'WARNING: No cpu shares support'],
    [facts.CPUSet, 'WARNING: No cpuset support'],
  ];
  const warnings = missing.filter(([has]) => !has).map(([, text]) => text);
  return {
    ...facts,
    CgroupDriver: v1 ? 'cgroupfs' : 'none',
    CgroupVersion: v1 ? '1' : '',
    Warnings: warnings.length > 0 ? warnings : null,
  };
}
