import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { CgroupController, ResourceLimits } from '../../linux/cgroup-limits.js';

/** The HostConfig resource fields the sandbox runtime honors through cgroups. */
export const CGROUP_HOST_FIELDS = ['Memory', 'MemorySwap', 'MemorySwappiness', 'NanoCpus', 'CpuQuota', 'CpuPeriod', 'CpuShares', 'CpusetCpus', 'CpusetMems', 'PidsLimit'] as const;

/** The cgroup controller each honored field needs. */
export const CONTROLLER_OF: Record<(typeof CGROUP_HOST_FIELDS)[number], CgroupController> = {
  Memory: 'memory', MemorySwap: 'memory', MemorySwappiness: 'memory', NanoCpus: 'cpu', CpuQuota: 'cpu', CpuPeriod: 'cpu', CpuShares: 'cpu',
  CpusetCpus: 'cpuset', CpusetMems: 'cpuset', PidsLimit: 'pids',
};

/** dockerd's floor for `--memory` (daemon/daemon_unix.go: linuxMinMemory). */
const MIN_MEMORY = 6 * 1024 * 1024;
const DEFAULT_CFS_PERIOD = 100_000;

/**
 * The limits a container spec asks for, checked the way dockerd checks them (its messages where it
 * has one). Fields the Docker CLI sends with their zero value are unset in the spec; so is -1 for
 * PidsLimit, and -1 for MemorySwap is unlimited.
 */
export function resourceLimits(spec: ContainerSpec, cpus: number, available: { cpus?: string; mems?: string } = {}): ResourceLimits {
  const host = spec.host;
  const limits: ResourceLimits = {};
  const memory = host.memory;
  if (memory !== undefined) {
    if (memory < MIN_MEMORY) throw EngineError.invalidParameter('Minimum memory limit allowed is 6MB');
    limits.memory = memory;
  }
  // -1 is "unlimited swap" here, not the CLI's unset value it is elsewhere.
  const swap = host.memorySwap;
  if (swap === -1 && memory === undefined) {
    // Unlimited swap without a memory limit is what every container has already.
  } else if (swap !== undefined) {
    if (memory === undefined) throw EngineError.invalidParameter('You should always set the Memory limit when using Memoryswap limit');
    if (swap !== -1 && swap < memory) throw EngineError.invalidParameter('Minimum memoryswap limit should be larger than memory limit, see usage');
    limits.memorySwap = swap;
  } else if (memory !== undefined) {
    // dockerd gives a container as much swap as memory when MemorySwap is left unset.
    limits.memorySwap = memory * 2;
  }
  const nano = host.nanoCpus;
  const quota = host.cpuQuota;
  const period = host.cpuPeriod;
  if (nano !== undefined) {
    if (quota !== undefined) throw EngineError.invalidParameter('Conflicting options: Nano CPUs and CPU Quota cannot both be set');
    if (period !== undefined) throw EngineError.invalidParameter('Conflicting options: Nano CPUs and CPU Period cannot both be set');
    if (nano < 0.01e9 || nano > cpus * 1e9) {
      throw EngineError.invalidParameter(`Range of CPUs is from 0.01 to ${cpus}.00, as there are only ${cpus} CPUs available`);
    }
    limits.cpu = { quota: Math.round((nano * DEFAULT_CFS_PERIOD) / 1e9), period: DEFAULT_CFS_PERIOD };
  } else if (quota !== undefined || period !== undefined) {
    const p = period ?? DEFAULT_CFS_PERIOD;
    if (p < 1000 || p > 1_000_000) throw EngineError.invalidParameter('CPU cfs period can not be less than 1ms (i.e. 1000) or larger than 1s (i.e. 1000000)');
    if (quota !== undefined && quota < 1000) throw EngineError.invalidParameter('CPU cfs quota can not be less than 1ms (i.e. 1000)');
    // A period alone is written too (quota -1: unlimited), as dockerd passes it to runc.
    limits.cpu = { quota: quota ?? -1, period: p };
  }
  const shares = host.cpuShares;
  if (shares !== undefined) {
    if (shares < 2 || shares > 262144) throw EngineError.invalidParameter('HostConfig.CpuShares must be between 2 and 262144');
    limits.cpuShares = shares;
  }
  const pids = host.pidsLimit;
  if (pids !== undefined && pids > 0) limits.pids = pids;
  // -1 is the CLI's unset; dockerd's own check and words (daemon_unix.go).
  const swappiness = host.memorySwappiness;
  if (swappiness !== undefined) {
    if (swappiness < 0 || swappiness > 100) throw EngineError.invalidParameter(`Invalid value: ${swappiness}, valid memory swappiness range is 0-100`);
    limits.swappiness = swappiness;
  }
  const cpuset = cpusetList(host.cpusetCpus, 'CpusetCpus', available.cpus ?? `0-${cpus - 1}`, 'Requested CPUs are not available');
  const mems = cpusetList(host.cpusetMems, 'CpusetMems', available.mems ?? '0', 'Requested memory nodes are not available');
  if (cpuset !== undefined || mems !== undefined) limits.cpuset = { ...(cpuset !== undefined ? { cpus: cpuset } : {}), ...(mems !== undefined ? { mems } : {}) };
  return limits;
}

/** A cpuset list (`0-2,4`) checked against what is available, in dockerd's words; undefined when unset. */
function cpusetList(value: string | undefined, field: string, available: string, unavailable: string): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+(-\d+)?(,\d+(-\d+)?)*$/.test(value)) throw EngineError.invalidParameter(`Invalid value ${String(value)} for cpuset ${field === 'CpusetCpus' ? 'cpus' : 'mems'}`);
  const have = new Set(expandList(available));
  if (!expandList(value).every((n) => have.has(n))) throw EngineError.invalidParameter(`${unavailable} - requested ${value}, available: ${available}`);
  return value;
}

function expandList(list: string): number[] {
  return list.trim().split(',').filter((p) => p !== '').flatMap((part) => {
    const [from = 0, to = from] = part.split('-').map(Number);
    return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
  });
}
