import { realpathSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { basename, dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { DEFAULT_CAPABILITIES } from '../../engine-api/default-capabilities.js';

export { DEFAULT_CAPABILITIES } from '../../engine-api/default-capabilities.js';

/** Namespace modes whose `host` value shares the host's namespace (`--pid host`, `--network host`…). */
const HOST_MODES = ['NetworkMode', 'PidMode', 'IpcMode', 'UTSMode', 'UsernsMode', 'CgroupnsMode', 'Cgroup'] as const;

/** HostConfig fields that are refused whenever they are set to anything but their empty value. */
const REFUSED_WHEN_SET: readonly { field: string; why: string }[] = [
  { field: 'Devices', why: 'host devices' },
  { field: 'DeviceRequests', why: 'host devices (GPUs)' },
  { field: 'DeviceCgroupRules', why: 'access to host devices' },
  { field: 'Sysctls', why: 'kernel parameters' },
  { field: 'CgroupParent', why: 'a cgroup outside the engine\'s' },
  { field: 'Runtime', why: 'another OCI runtime' },
];

/** Lists that replace Docker's defaults when present at all: `[]` unmasks every path. */
const REFUSED_WHEN_PRESENT: readonly { field: string; why: string }[] = [
  { field: 'MaskedPaths', why: 'replacing the masked /proc and /sys paths' },
  { field: 'ReadonlyPaths', why: 'replacing the read-only /proc and /sys paths' },
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
 * The first field of a create body that would reach the host, as a refusal message naming it,
 * or undefined when there is none. Covers binds and bind mounts of host paths outside the allowed
 * directories, Privileged, the host's namespaces, capabilities beyond Docker's default set,
 * devices, SecurityOpt that loosens confinement, sysctls, cgroup placement, another runtime,
 * unmasked paths, OOM-killer exemptions, local volumes bound to host paths, privileged host ports,
 * ports published on the host's loopback (unless `allowLoopbackPublish`) and networks named `host`.
 */
export function hostReachingField(body: Readonly<Record<string, unknown>>, options: HostReachOptions): string | undefined {
  const host = (typeof body.HostConfig === 'object' && body.HostConfig !== null ? body.HostConfig : {}) as Record<string, unknown>;
  const allowedText = options.allowedBindDirs.length > 0 ? ` (allowed: under ${options.allowedBindDirs.join(', ')})` : '';

  if (host.Privileged === true) return 'HostConfig.Privileged: privileged containers are for administrators';
  for (const mode of HOST_MODES) {
    if (host[mode] === 'host') return `HostConfig.${mode}: the host's namespace ("host") is for administrators`;
  }
  const endpoints = (body.NetworkingConfig as { EndpointsConfig?: unknown } | undefined)?.EndpointsConfig;
  if (endpoints && typeof endpoints === 'object' && 'host' in endpoints) return 'NetworkingConfig.EndpointsConfig: the host network is for administrators';

  if (Array.isArray(host.Binds)) {
    for (const bind of host.Binds) {
      if (typeof bind !== 'string') continue;
      const source = bind.split(':')[0] ?? '';
      // A source without a leading slash is a named volume, not a host path.
      if (source.startsWith('/') && !underAllowedDir(source, options.allowedBindDirs)) {
        return `HostConfig.Binds: binding the host path ${source} is for administrators${allowedText}`;
      }
    }
  }
  if (Array.isArray(host.Mounts)) {
    for (const mount of host.Mounts as Record<string, unknown>[]) {
      const type = mount?.Type ?? 'volume';
      if (type === 'bind') {
        const source = typeof mount.Source === 'string' ? mount.Source : '';
        if (!underAllowedDir(source, options.allowedBindDirs)) return `HostConfig.Mounts: binding the host path ${source} is for administrators${allowedText}`;
      } else if (type === 'volume') {
        const driver = (mount.VolumeOptions as { DriverConfig?: { Name?: unknown; Options?: unknown } } | undefined)?.DriverConfig;
        if (!isEmpty(driver?.Options)) return 'HostConfig.Mounts: VolumeOptions.DriverConfig options (a volume bound to a host path) are for administrators';
        if (!isEmpty(driver?.Name) && driver?.Name !== 'local') return `HostConfig.Mounts: the ${String(driver?.Name)} volume driver is for administrators`;
      } else if (type !== 'tmpfs') {
        return `HostConfig.Mounts: mounts of type ${String(type)} are for administrators`;
      }
    }
  }
  if (Array.isArray(host.CapAdd)) {
    for (const cap of host.CapAdd) {
      if (typeof cap !== 'string') continue;
      const name = capabilityName(cap);
      if (!DEFAULT_CAPABILITIES.has(name)) return `HostConfig.CapAdd: ${name} is beyond Docker's default capabilities and is for administrators`;
    }
  }
  for (const { field, why } of REFUSED_WHEN_SET) {
    if (!isEmpty(host[field])) return `HostConfig.${field}: ${why} are for administrators`;
  }
  for (const { field, why } of REFUSED_WHEN_PRESENT) {
    if (host[field] !== undefined && host[field] !== null) return `HostConfig.${field}: ${why} is for administrators`;
  }
  if (Array.isArray(host.SecurityOpt)) {
    for (const opt of host.SecurityOpt) {
      if (typeof opt === 'string' && loosens(opt)) return `HostConfig.SecurityOpt: ${opt} loosens confinement and is for administrators`;
    }
  }
  const logType = (host.LogConfig as { Type?: unknown } | undefined)?.Type;
  if (logType !== undefined && logType !== null && !LOCAL_LOG_DRIVERS.has(String(logType))) {
    return `HostConfig.LogConfig: the ${String(logType)} log driver sends output from the host to an address of your choosing and is for administrators`;
  }
  if (host.VolumeDriver !== undefined && host.VolumeDriver !== null && host.VolumeDriver !== '' && host.VolumeDriver !== 'local') {
    return `HostConfig.VolumeDriver: the ${String(host.VolumeDriver)} volume driver is for administrators`;
  }
  if (host.OomKillDisable === true) return 'HostConfig.OomKillDisable: exempting a container from the OOM killer is for administrators';
  if (typeof host.OomScoreAdj === 'number' && host.OomScoreAdj < 0) return 'HostConfig.OomScoreAdj: a negative score (host processes killed first) is for administrators';
  if (host.Isolation !== undefined && host.Isolation !== '' && host.Isolation !== 'default') return `HostConfig.Isolation: ${String(host.Isolation)} is for administrators`;
  const ports = host.PortBindings;
  if (ports && typeof ports === 'object') {
    for (const bindings of Object.values(ports as Record<string, unknown>)) {
      for (const b of Array.isArray(bindings) ? (bindings as { HostPort?: unknown; HostIp?: unknown }[]) : []) {
        const port = Number(b?.HostPort);
        if (Number.isInteger(port) && port > 0 && port < 1024) return `HostConfig.PortBindings: host port ${port} is privileged (below 1024) and is for administrators`;
        if (!options.allowLoopbackPublish && typeof b?.HostIp === 'string' && isLoopback(b.HostIp)) {
          return `HostConfig.PortBindings: publishing on the host's loopback address ${b.HostIp} (where local services listen) is for administrators`;
        }
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
export function hostReachingExecField(body: Readonly<Record<string, unknown>>): string | undefined {
  return body.Privileged === true ? 'Privileged: privileged execs are for administrators' : undefined;
}

/** `docker volume create -o type=none -o o=bind -o device=/`: local volumes can bind host paths. */
export function hostReachingVolumeField(body: Readonly<Record<string, unknown>>): string | undefined {
  if (!isEmpty(body.DriverOpts)) return 'DriverOpts: volume driver options (a volume bound to a host path) are for administrators';
  if (!isEmpty(body.Driver) && body.Driver !== 'local') return `Driver: the ${String(body.Driver)} volume driver is for administrators`;
  return undefined;
}
