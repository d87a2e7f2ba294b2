import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalImage } from '../local/local-container.js';
import { createFieldsExcept, UNHONORED_HOST_FIELDS } from '../../../engine-api/create-fields.js';
import { bindSpecs } from './bwrap-args.js';
import { resolveUserAtCreate, resolveUserIn, type ResolvedUser } from './passwd.js';
import type { Cgroups } from '../../linux/cgroups.js';
import { ownsNetwork } from './network/container-network.js';
import { exposedPortKeys, portRequests } from './network/port-bindings.js';
import { extraHostLines } from './network/extra-hosts.js';
import { predefinedEndpoints } from './network/predefined-endpoint.js';
import { SANDBOX_DEFAULTS } from './default-limits.js';
import { tmpfsMounts } from './tmpfs-options.js';
import { CGROUP_HOST_FIELDS, CONTROLLER_OF, resourceLimits } from './resource-limits.js';
import type { ResourceLimits } from '../../linux/cgroup-limits.js';
import { securityOptions } from './seccomp/security-opt.js';
import { rootlessIdentity, undelegatedReason } from './rootless.js';

/**
 * Fields this runtime honors among those no embedded runtime did: the cgroup limits, SecurityOpt
 * (checked by security-opt.ts), the published ports of its own network (network/port-bindings.ts),
 * the namespace modes and the fields it answers by name itself ({@link namespaceModes}), and
 * VolumesFrom, whose volumes the local runtime mounts as binds (container-mounts.ts), and Links,
 * DNS aliases on user-defined networks (network/network-links.ts; refused on the default bridge),
 * and ExtraHosts, lines of the container's /etc/hosts (network/extra-hosts.ts).
 */
const HONORED_HERE: readonly string[] = [...CGROUP_HOST_FIELDS, 'SecurityOpt', 'PortBindings', 'PublishAllPorts', 'UTSMode', 'IpcMode', 'PidMode', 'GroupAdd', 'DeviceCgroupRules', 'VolumesFrom', 'Links', 'ExtraHosts'];

/** What the sandbox honors of a create body: all but the resource and isolation fields it cannot carry (refused by the router whenever set). */
export const SANDBOX_CREATE_FIELDS = createFieldsExcept(UNHONORED_HOST_FIELDS.filter((f) => !HONORED_HERE.includes(f)).map((f) => `HostConfig.${f}`));

/**
 * Refuses, with a 400 naming the field, every create field the sandbox cannot honor, and
 * checks the honored ones (binds exist, capabilities are names, User names exist in the image).
 * Answers the User as the image's passwd resolves it (undefined: none asked, or no image root to
 * look in), so the create's later checks do not read those files again.
 */
export async function refuseUnsupported(
  spec: ContainerSpec, image?: LocalImage, cgroups?: Cgroups, cpus = 1,
  tmpfs: { size: number; total: number } = { size: SANDBOX_DEFAULTS.tmpfsSize, total: SANDBOX_DEFAULTS.maxTmpfsBytes }, userNetworks = false,
): Promise<ResolvedUser | undefined> {
  const { host } = spec;
  namespaceModes(spec);
  await groupsAndDevices(spec, image);
  if (spec.macAddress !== '') {
    throw EngineError.invalidParameter('MacAddress is not supported by the sandbox runtime (its network stack gives each container its own address)');
  }
  checkLimits(spec, cgroups, cpus);
  securityOptions(spec);
  extraHostLines(spec);
  predefinedEndpoints(spec);
  bindSpecs(spec);
  for (const path of Object.keys(host.tmpfs)) {
    if (!path.startsWith('/')) throw EngineError.invalidParameter(`HostConfig.Tmpfs path "${path}" must be absolute`);
  }
  tmpfsMounts(host.tmpfs, tmpfs.size, tmpfs.total);
  for (const [field, caps] of [['CapAdd', host.capAdd], ['CapDrop', host.capDrop]] as const) {
    for (const cap of caps) {
      if (!/^(CAP_)?[A-Z_]+$/i.test(cap)) throw EngineError.invalidParameter(`HostConfig.${field}: invalid capability "${cap}"`);
    }
  }
  const mode = host.networkMode;
  const predefined = mode === '' || mode === 'default' || mode === 'bridge' || mode === 'host' || mode === 'none';
  // A user-defined network's name and another container's (`container:ID`, which must run at
  // start, as dockerd has it) are checked by the networks (sandbox-networks.ts).
  if (!predefined && (!userNetworks || mode === 'container:')) {
    throw EngineError.invalidParameter(`HostConfig.NetworkMode "${mode}" is not supported by the sandbox runtime (bridge, host, none${userNetworks ? ', container:ID or a user-defined network' : ''})`);
  }
  // Links need the runtime's networks (the default bridge and user networks: network/bridge-links.ts, network-links.ts).
  if (!userNetworks && host.links.length > 0) {
    throw EngineError.invalidParameter('HostConfig.Links is not supported by the sandbox runtime on this server (it has no default bridge or user-defined networks: not root, or no iproute2)');
  }
  exposedPortKeys(spec);
  const published = portRequests(spec);
  // dockerd drops them with a warning (host) or silently (none); a dropped field is refused here.
  if (published.length > 0 && !ownsNetwork(spec)) {
    // dockerd: "conflicting options: port publishing and the container type network mode".
    throw EngineError.invalidParameter(`HostConfig.PortBindings: ports cannot be published with NetworkMode "${mode}" (the container has no network of its own)`);
  }
  const { user } = spec;
  let resolved: ResolvedUser | undefined;
  if (user !== '') {
    if (!/^[^:\s]+(:[^:\s]+)?$/.test(user)) throw EngineError.invalidParameter(`User "${user}" must be user[:group]`);
    if (image?.rootfs) resolved = await resolveUserAtCreate(image.rootfs, user);
    else if (!/^\d+(:\d+)?$/.test(user)) throw EngineError.invalidParameter(`User "${user}": the image has no /etc/passwd to look the name up in`);
  }
  if (spec.workingDir !== '' && !spec.workingDir.startsWith('/')) {
    throw EngineError.invalidParameter('WorkingDir must be an absolute path');
  }
  return resolved;
}

/**
 * PidMode `host`, refused to administrators too: bubblewrap's `--as-pid-1` and `/proc` need the
 * container's own PID namespace, and container root, an unprivileged uid of its user namespace,
 * could neither mount the host's /proc nor signal or trace a host process, so `ps`, `kill` and
 * `nsenter -t 1` would not do what dockerd's --pid host gives. Said so rather than half-honored.
 */
const PID_HOST_REFUSAL = 'HostConfig.PidMode "host" is not supported by the sandbox runtime, administrators included: its containers run in a PID namespace of their own under an unprivileged user namespace, which can neither mount the host\'s /proc nor signal or trace host processes (use the docker runtime for --pid host)';

/**
 * UTSMode `host` (the server's hostname; bwrap-args.ts leaves out `--unshare-uts`) and IpcMode
 * `host` (no `--unshare-ipc`) are honored, `private` and `shareable` IPC are what every container
 * has; joining another container's namespaces (`container:ID`) and the host's PID namespace are
 * refused by name, since bubblewrap makes each container's namespaces afresh. Invalid modes get
 * dockerd's words.
 */
function namespaceModes({ host, hostname }: ContainerSpec): void {
  const uts = host.utsMode;
  if (uts !== '' && uts !== 'host') throw EngineError.invalidParameter(`invalid UTS mode: ${uts}`);
  if (uts === 'host' && hostname !== '') throw EngineError.invalidParameter('conflicting options: hostname and the UTS mode');
  for (const [field, name, allowed, value] of [['IpcMode', 'IPC', ['', 'private', 'shareable', 'host'], host.ipcMode], ['PidMode', 'PID', [''], host.pidMode]] as const) {
    if ((allowed as readonly string[]).includes(value)) continue;
    if (value.startsWith('container:') && value.length > 'container:'.length) {
      throw EngineError.invalidParameter(`HostConfig.${field} "${value}": joining another container's ${name} namespace is not supported by the sandbox runtime (each container gets its own)`);
    }
    if (field === 'PidMode' && value === 'host') {
      throw EngineError.invalidParameter(PID_HOST_REFUSAL);
    }
    if (value === 'host' || value === 'none') {
      throw EngineError.invalidParameter(`HostConfig.${field} "${value}" is not supported by the sandbox runtime (each container gets its own ${name} namespace)`);
    }
    throw EngineError.invalidParameter(`invalid ${name} mode: ${value}`);
  }
}

/**
 * GroupAdd: names must exist in the image's /etc/group (dockerd's words when one does not); the
 * start gives them as supplementary groups (launch/user.ts, userns/enter.ts). DeviceCgroupRules:
 * refused, since the sandbox never gives a container a device a rule could allow.
 */
async function groupsAndDevices({ host }: ContainerSpec, image?: LocalImage): Promise<void> {
  const groups = host.groupAdd;
  if (groups.length > 0) {
    for (const g of groups) {
      if (g === '') throw EngineError.invalidParameter('HostConfig.GroupAdd entries must be group names or ids');
      if (!/^\d+$/.test(g) && image?.rootfs) {
        try {
          await resolveUserIn(image.rootfs, `0:${g}`);
        } catch {
          throw EngineError.invalidParameter(`Unable to find group ${g}: no matching entries in group file`);
        }
      }
    }
  }
  if (host.deviceCgroupRules.length > 0) {
    throw EngineError.invalidParameter('HostConfig.DeviceCgroupRules is not supported by the sandbox runtime (it gives containers no devices beyond the default /dev, so there is nothing for a rule to allow)');
  }
}

/**
 * Memory, CPU and pids limits are honored through cgroups where this server can manage the
 * controller; where it cannot, the field is refused by name, never dropped.
 */
export function checkLimits(spec: ContainerSpec, cgroups: Cgroups | undefined, cpus: number): ResourceLimits {
  const limits = resourceLimits(spec, cpus, cgroups?.cpusetAvailable);
  const manageable = new Set(cgroups?.controllers ?? []);
  for (const field of CGROUP_HOST_FIELDS) {
    const controller = CONTROLLER_OF[field];
    if (limitSet(limits, field) && limitAsked(spec, field) && !manageable.has(controller)) {
      // Rootless: the error names the group to delegate and the command that does it (rootless.ts).
      const user = rootlessIdentity();
      const why = user ? undelegatedReason(cgroups, controller, user) : `it cannot manage the ${controller} cgroup`;
      throw EngineError.invalidParameter(`HostConfig.${field} is not supported by the sandbox runtime on this server (${why})`);
    }
  }
  return limits;
}

/** The spec itself sets the field (a limit can also come from a sibling field: MemorySwap from Memory). */
function limitAsked({ host }: ContainerSpec, field: (typeof CGROUP_HOST_FIELDS)[number]): boolean {
  const key = (field.charAt(0).toLowerCase() + field.slice(1)) as keyof ContainerSpec['host'];
  return host[key] !== undefined;
}

function limitSet(limits: ResourceLimits, field: (typeof CGROUP_HOST_FIELDS)[number]): boolean {
  switch (field) {
    case 'MemorySwappiness': return limits.swappiness !== undefined;
    case 'CpusetCpus': return limits.cpuset?.cpus !== undefined;
    case 'CpusetMems': return limits.cpuset?.mems !== undefined;
    case 'Memory': case 'MemorySwap': return limits.memory !== undefined;
    case 'NanoCpus': case 'CpuQuota': case 'CpuPeriod': return limits.cpu !== undefined;
    case 'CpuShares': return limits.cpuShares !== undefined;
    case 'PidsLimit': return limits.pids !== undefined;
  }
}
