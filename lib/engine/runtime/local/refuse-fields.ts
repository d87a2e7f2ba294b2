import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerCreateBody } from '../../../engine-api/runtime-types.js';

/**
 * Resource and isolation fields of HostConfig no embedded runtime honors yet. The Docker CLI sends
 * most of them on every create with their zero value (0, false, null, [], {}), so only a set value
 * is refused.
 */
export const UNHONORED_HOST_FIELDS = [
  'Memory', 'MemorySwap', 'MemoryReservation', 'MemorySwappiness', 'KernelMemory', 'NanoCpus', 'CpuShares', 'CpuQuota', 'CpuPeriod',
  'CpuRealtimePeriod', 'CpuRealtimeRuntime', 'CpusetCpus', 'CpusetMems', 'CpuCount', 'CpuPercent', 'PidsLimit',
  'BlkioWeight', 'BlkioWeightDevice', 'BlkioDeviceReadBps', 'BlkioDeviceWriteBps', 'BlkioDeviceReadIOps', 'BlkioDeviceWriteIOps',
  'OomKillDisable', 'OomScoreAdj', 'Privileged', 'PortBindings', 'PublishAllPorts', 'Devices', 'DeviceRequests', 'DeviceCgroupRules',
  'SecurityOpt', 'Sysctls', 'Ulimits', 'VolumesFrom', 'VolumeDriver', 'Links', 'ExtraHosts', 'Dns', 'DnsOptions', 'DnsSearch',
  'GroupAdd', 'ShmSize', 'IpcMode', 'PidMode', 'UTSMode', 'UsernsMode', 'CgroupParent', 'Cgroup', 'MaskedPaths', 'ReadonlyPaths',
  'StorageOpt', 'IOMaximumBandwidth', 'IOMaximumIOps',
];

/** True for a value the Docker CLI sends when the user did not set the field. */
export function isUnset(v: unknown): boolean {
  // -1 is the CLI's "unset" for MemorySwappiness (and "unlimited" for PidsLimit).
  return v === undefined || v === null || v === false || v === 0 || v === -1 || v === '' || (Array.isArray(v) && v.length === 0)
    || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);
}

/** Throws a 400 naming the first of `fields` (HostConfig fields) that is set. */
export function refuseHostFields(body: ContainerCreateBody, fields: readonly string[], runtime: string): void {
  const host = body.HostConfig ?? {};
  for (const field of fields) {
    if (!isUnset(host[field])) throw EngineError.invalidParameter(`HostConfig.${field} is not supported by the ${runtime} runtime`);
  }
}

/** Throws a 400 naming the first of `fields` (top-level create fields) that is set. */
export function refuseConfigFields(body: ContainerCreateBody, fields: readonly string[], runtime: string): void {
  for (const field of fields) {
    if (!isUnset(body[field])) throw EngineError.invalidParameter(`${field} is not supported by the ${runtime} runtime`);
  }
}
