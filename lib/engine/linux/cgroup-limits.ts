/**
 * A container's cgroup v1 limits in the kernel's units, and the controllers they need: what
 * cgroups.ts writes. Decoding them from a create body is the runtime's job (the sandbox's
 * resource-limits.ts); the process runtime asks for a pids limit only.
 */

/** The cgroup v1 controllers this server may manage. */
export type CgroupController = 'memory' | 'cpu' | 'cpuset' | 'pids';

/** A container's limits in the kernel's units; an absent member is no limit. */
export interface ResourceLimits {
  /** Bytes of memory (`memory.limit_in_bytes`). */
  memory?: number;
  /** Bytes of memory plus swap (`memory.memsw.limit_in_bytes`); -1 is unlimited swap. */
  memorySwap?: number;
  /** CFS bandwidth: `quota` µs of CPU time per `period` µs. */
  cpu?: { quota: number; period: number };
  /** Relative CPU weight (`cpu.shares`). */
  cpuShares?: number;
  /** Most tasks at once (`pids.max`). */
  pids?: number;
  /** `memory.swappiness` (0-100). */
  swappiness?: number;
  /** `cpuset.cpus` and `cpuset.mems` lists (`0-1,3`); an absent one is the parent's. */
  cpuset?: { cpus?: string; mems?: string };
}

/** The controllers a set of limits needs. */
export function controllersFor(limits: ResourceLimits): CgroupController[] {
  const needed = new Set<CgroupController>();
  if (limits.memory !== undefined || limits.swappiness !== undefined) needed.add('memory');
  if (limits.cpuset !== undefined) needed.add('cpuset');
  if (limits.cpu !== undefined || limits.cpuShares !== undefined) needed.add('cpu');
  if (limits.pids !== undefined) needed.add('pids');
  return [...needed];
}
