import { realpathSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { basename, dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { DEFAULT_CAPABILITIES } from '../../engine-api/default-capabilities.js';
import type { ContainerSpec, HostSpec } from '../../engine-api/container-spec.js';
import type { ExecSpec } from '../../engine-api/exec-spec.js';

export { DEFAULT_CAPABILITIES } from '../../engine-api/default-capabilities.js';

/** Namespace modes whose `host` value shares the host's namespace (`--pid host`, `--network host`…), with their field's name. */
const HOST_MODES = [
  ['networkMode', 'NetworkMode'], ['pidMode', 'PidMode'], ['ipcMode', 'IpcMode'], ['utsMode', 'UTSMode'], ['usernsMode', 'UsernsMode'],
  ['cgroupnsMode', 'CgroupnsMode'], ['cgroup', 'Cgroup'],
] as const;

/** Fields that are refused whenever they are set to anything but their empty value. */
const REFUSED_WHEN_SET: readonly { key: keyof HostSpec; field: string; why: string }[] = [
  { key: 'devices', field: 'Devices', why: 'host devices' },
  { key: 'deviceRequests', field: 'DeviceRequests', why: 'host devices (GPUs)' },
  { key: 'deviceCgroupRules', field: 'DeviceCgroupRules', why: 'access to host devices' },
  { key: 'sysctls', field: 'Sysctls', why: 'kernel parameters' },
  { key: 'cgroupParent', field: 'CgroupParent', why: 'a cgroup outside the engine\'s' },
  { key: 'runtime', field: 'Runtime', why: 'another OCI runtime' },
];

/** Lists that replace Docker's defaults when present at all: `[]` unmasks every path. */
const REFUSED_WHEN_PRESENT: readonly { key: 'maskedPaths' | 'readonlyPaths'; field: string; why: string }[] = [
  { key: 'maskedPaths', field: 'MaskedPaths', why: 'replacing the masked /proc and /sys paths' },
  { key: 'readonlyPaths', field: 'ReadonlyPaths', why: 'replacing the read-only /proc and /sys paths' },
];

/**
 * Log drivers that keep output in the engine's own files. The others (syslog, fluentd, gelf…)
 * make the engine connect, from the host, to an address the container's creator picks:
 * the host's loopback services included.
 */
const LOCAL_LOG_DRIVERS: ReadonlySet<string> = new Set(['', 'json-file', 'local', 'none']);

/** What the tenant checks allow besides the defaults. */
export interface HostReachOptions {
  /** Host directories under which binds are allowed (absolute, normalized). */
  allowedBindDirs: readonly string[];
  /** Whether ports may be published on the host's loopback addresses (127.0.0.0/8, ::1). */
  allowLoopbackPublish?: boolean;
}

const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || v === '' || v === false || (Array.isArray(v) && v.length === 0) || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/** `CAP_SYS_ADMIN`, `sys_admin` → `SYS_ADMIN` (dockerd accepts both spellings). */
function capabilityName(cap: string): string {
  return cap.toUpperCase().replace(/^CAP_/, '');
}

/**
 * Whether a host path lies in (or is) one of the allowed directories. The path is normalized and
 * its existing part resolved through symlinks first, so neither `..` nor a symlink planted
 * inside an allowed directory (`/allowed/up -> /`) climbs out.
 */
export function underAllowedDir(path: string, allowed: readonly string[]): boolean {
  if (!isAbsolute(path)) return false;
  const p = resolveExisting(normalize(path));
  return allowed.some((dir) => {
    const rel = relative(dir, p);
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
  });
}

/** The path with its longest existing prefix resolved through symlinks (dockerd creates the rest as directories). */
function resolveExisting(path: string): string {
  let head = path;
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...rest);
    } catch {
      if (head === dirname(head)) return path;
      rest.unshift(basename(head));
      head = dirname(head);
    }
  }
}

/**
 * The first field of a create's typed spec that would reach the host, as a refusal message naming it,
 * or undefined when there is none. Covers binds and bind mounts of host paths outside the allowed
 * directories, Privileged, the host's namespaces, capabilities beyond Docker's default set,
 * devices, SecurityOpt that loosens confinement, sysctls, cgroup placement, another runtime,
 * unmasked paths, OOM-killer exemptions, local volumes bound to host paths, privileged host ports,
 * ports published on the host's loopback (unless `allowLoopbackPublish`) and networks named `host`.
 */
export function hostReachingField(spec: ContainerSpec, options: HostReachOptions): string | undefined {
  const { host } = spec;
  const allowedText = options.allowedBindDirs.length > 0 ? ` (allowed: under ${options.allowedBindDirs.join(', ')})` : '';

  if (host.privileged) return 'HostConfig.Privileged: privileged containers are for administrators';
  for (const [key, field] of HOST_MODES) {
    if (host[key] === 'host') return `HostConfig.${field}: the host's namespace ("host") is for administrators`;
  }
  if ('host' in spec.networks) return 'NetworkingConfig.EndpointsConfig: the host network is for administrators';

  for (const { source } of host.binds) {
    // A source without a leading slash is a named volume (none: an anonymous one), not a host path.
    if (source.startsWith('/') && !underAllowedDir(source, options.allowedBindDirs)) {
      return `HostConfig.Binds: binding the host path ${source} is for administrators${allowedText}`;
    }
  }
  for (const mount of host.mounts) {
    const type = mount.type ?? 'volume';
    if (type === 'bind') {
      const source = mount.source ?? '';
      if (!underAllowedDir(source, options.allowedBindDirs)) return `HostConfig.Mounts: binding the host path ${source} is for administrators${allowedText}`;
    } else if (type === 'volume') {
      const driver = (mount.options.VolumeOptions as { DriverConfig?: { Name?: unknown; Options?: unknown } } | undefined)?.DriverConfig;
      if (!isEmpty(driver?.Options)) return 'HostConfig.Mounts: VolumeOptions.DriverConfig options (a volume bound to a host path) are for administrators';
      if (!isEmpty(driver?.Name) && driver?.Name !== 'local') return `HostConfig.Mounts: the ${String(driver?.Name)} volume driver is for administrators`;
    } else if (type !== 'tmpfs') {
      return `HostConfig.Mounts: mounts of type ${type} are for administrators`;
    }
  }
  for (const cap of host.capAdd) {
    const name = capabilityName(cap);
    if (!DEFAULT_CAPABILITIES.has(name)) return `HostConfig.CapAdd: ${name} is beyond Docker's default capabilities and is for administrators`;
  }
  for (const { key, field, why } of REFUSED_WHEN_SET) {
    if (!isEmpty(host[key])) return `HostConfig.${field}: ${why} are for administrators`;
  }
  for (const { key, field, why } of REFUSED_WHEN_PRESENT) {
    if (host[key] !== undefined) return `HostConfig.${field}: ${why} is for administrators`;
  }
  for (const opt of host.securityOpt) {
    if (loosens(opt)) return `HostConfig.SecurityOpt: ${opt} loosens confinement and is for administrators`;
  }
  const logType = host.logConfig.type;
  if (!LOCAL_LOG_DRIVERS.has(logType)) {
    return `HostConfig.LogConfig: the ${logType} log driver sends output from the host to an address of your choosing and is for administrators`;
  }
  if (host.volumeDriver !== '' && host.volumeDriver !== 'local') {
    return `HostConfig.VolumeDriver: the ${host.volumeDriver} volume driver is for administrators`;
  }
  if (host.oomKillDisable) return 'HostConfig.OomKillDisable: exempting a container from the OOM killer is for administrators';
  if (host.oomScoreAdj !== undefined && host.oomScoreAdj < 0) return 'HostConfig.OomScoreAdj: a negative score (host processes killed first) is for administrators';
  if (host.isolation !== '' && host.isolation !== 'default') return `HostConfig.Isolation: ${host.isolation} is for administrators`;
  for (const bindings of Object.values(host.portBindings)) {
    for (const b of bindings) {
      const port = Number(b.hostPort);
      if (Number.isInteger(port) && port > 0 && port < 1024) return `HostConfig.PortBindings: host port ${port} is privileged (below 1024) and is for administrators`;
      if (!options.allowLoopbackPublish && isLoopback(b.hostIp)) {
        return `HostConfig.PortBindings: publishing on the host's loopback address ${b.hostIp} (where local services listen) is for administrators`;
      }
    }
  }
  return undefined;
}

/** 127.0.0.0/8, `::1` (also bracketed, or as an IPv4-mapped address) and `localhost`. */
function isLoopback(hostIp: string): boolean {
  const ip = hostIp.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (ip === 'localhost') return true;
  if (isIPv4(ip)) return ip.startsWith('127.');
  if (!isIPv6(ip)) return false;
  // The URL parser writes an IPv6 address in its one canonical form: ::1, ::ffff:7f00:1…
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  return canonical === '::1' || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(canonical);
}

/**
 * SecurityOpt entries that weaken confinement: seccomp off or replaced by a custom profile,
 * AppArmor off, SELinux labelling off or a type of one's choosing, system paths unmasked.
 * `no-new-privileges` only tightens and is left alone. dockerd takes `=` and the older `:`.
 */
function loosens(opt: string): boolean {
  const [key = '', value = ''] = opt.split(/[=:](.*)/s);
  switch (key) {
    case 'seccomp':
      return value !== 'builtin';
    case 'apparmor':
      return value === 'unconfined';
    case 'label':
      return value === 'disable' || value.startsWith('type:') || value.startsWith('type=');
    case 'systempaths':
      return value === 'unconfined';
    case 'no-new-privileges':
      return false;
    default:
      // An option this list does not know may loosen something: refuse rather than let it through.
      return true;
  }
}

/** Exec bodies: `docker exec --privileged`. */
export function hostReachingExecField(exec: ExecSpec): string | undefined {
  return exec.privileged ? 'Privileged: privileged execs are for administrators' : undefined;
}

/** `docker volume create -o type=none -o o=bind -o device=/`: local volumes can bind host paths. */
export function hostReachingVolumeField(body: Readonly<Record<string, unknown>>): string | undefined {
  if (!isEmpty(body.DriverOpts)) return 'DriverOpts: volume driver options (a volume bound to a host path) are for administrators';
  if (!isEmpty(body.Driver) && body.Driver !== 'local') return `Driver: the ${String(body.Driver)} volume driver is for administrators`;
  return undefined;
}
