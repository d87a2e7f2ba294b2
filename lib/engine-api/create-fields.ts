import { EngineError } from './engine-error.js';
import type { ContainerCreateBody } from './container-spec.js';

/** `container.Config` fields of a create body (dockerd's api/types/container/config.go). */
const CONFIG_FIELDS = [
  'User', 'Hostname', 'Domainname', 'WorkingDir', 'Volumes', 'ExposedPorts', 'AttachStdin', 'AttachStdout', 'AttachStderr', 'Tty',
  'OpenStdin', 'StdinOnce', 'Env', 'Cmd', 'Healthcheck', 'ArgsEscaped', 'Image', 'Entrypoint', 'NetworkDisabled', 'MacAddress',
  'OnBuild', 'Labels', 'StopSignal', 'StopTimeout', 'Shell', 'NetworkingConfig',
];

/**
 * Resource and isolation fields of HostConfig that no embedded runtime honored when each runtime
 * refused them itself; the order is the order a body setting several is refused in.
 */
export const UNHONORED_HOST_FIELDS = [
  'Memory', 'MemorySwap', 'MemoryReservation', 'MemorySwappiness', 'KernelMemory', 'NanoCpus', 'CpuShares', 'CpuQuota', 'CpuPeriod',
  'CpuRealtimePeriod', 'CpuRealtimeRuntime', 'CpusetCpus', 'CpusetMems', 'CpuCount', 'CpuPercent', 'PidsLimit',
  'BlkioWeight', 'BlkioWeightDevice', 'BlkioDeviceReadBps', 'BlkioDeviceWriteBps', 'BlkioDeviceReadIOps', 'BlkioDeviceWriteIOps',
  'OomKillDisable', 'OomScoreAdj', 'Privileged', 'PortBindings', 'PublishAllPorts', 'Devices', 'DeviceRequests', 'DeviceCgroupRules',
  'SecurityOpt', 'Sysctls', 'Ulimits', 'VolumesFrom', 'VolumeDriver', 'Links', 'ExtraHosts', 'Dns', 'DnsOptions', 'DnsSearch',
  'GroupAdd', 'ShmSize', 'IpcMode', 'PidMode', 'UTSMode', 'UsernsMode', 'CgroupParent', 'Cgroup', 'MaskedPaths', 'ReadonlyPaths',
  'StorageOpt', 'IOMaximumBandwidth', 'IOMaximumIOps',
] as const;

/** `HostConfig` fields (dockerd's api/types/container/host_config.go, API 1.41), the unhonored ones first. */
const HOST_FIELDS = [
  ...UNHONORED_HOST_FIELDS, 'Binds', 'Mounts', 'Tmpfs', 'ReadonlyRootfs', 'CapAdd', 'CapDrop', 'Init', 'ContainerIDFile', 'LogConfig',
  'NetworkMode', 'RestartPolicy', 'AutoRemove', 'CgroupnsMode', 'Runtime', 'ConsoleSize', 'Isolation', 'KernelMemoryTCP',
];

/**
 * Every create field a runtime states support for, by the name its refusal gives: `User`,
 * `HostConfig.Binds`. A field outside this list (one dockerd does not know either) is left to
 * the runtime, as dockerd ignores it.
 */
export const CREATE_FIELDS: readonly string[] = [...CONFIG_FIELDS, ...HOST_FIELDS.map((f) => `HostConfig.${f}`)];

/** The create fields but `refused` (names as in {@link CREATE_FIELDS}): a runtime's statement of what it honors. */
export function createFieldsExcept(refused: readonly string[]): readonly string[] {
  const out = new Set(refused);
  return CREATE_FIELDS.filter((f) => !out.has(f));
}

/** True for a value the Docker CLI sends when the user did not set the field. */
export function isUnset(v: unknown): boolean {
  // -1 is the CLI's "unset" for MemorySwappiness (and "unlimited" for PidsLimit).
  return v === undefined || v === null || v === false || v === 0 || v === -1 || v === '' || (Array.isArray(v) && v.length === 0)
    || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0);
}

/**
 * Refuses, with one 400 naming it (`HostConfig.Privileged is not supported by the process
 * runtime`), the first field of {@link CREATE_FIELDS} that the body sets and `supported` leaves
 * out. The Docker CLI sends most fields on every create with their zero value (0, false, null, [],
 * {}), so only a set value counts. `supported` undefined: the runtime takes every field (a
 * forwarding runtime).
 *
 * @throws {EngineError} InvalidParameter naming the field.
 */
export function refuseUnsupportedFields(body: ContainerCreateBody, supported: readonly string[] | undefined, runtime: string): void {
  if (supported === undefined) return;
  const honored = new Set(supported);
  const host = body.HostConfig && typeof body.HostConfig === 'object' ? body.HostConfig : {};
  for (const field of CREATE_FIELDS) {
    if (honored.has(field)) continue;
    const value = field.startsWith('HostConfig.') ? host[field.slice('HostConfig.'.length)] : body[field];
    if (!isUnset(value)) throw EngineError.invalidParameter(`${field} is not supported by the ${runtime} runtime`);
  }
}
