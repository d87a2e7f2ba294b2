import { EngineError } from './engine-error.js';
import { parseBindEntry, type BindSpec } from './bind-spec.js';

export { bindEntryOf, parseBindEntry, type BindSpec } from './bind-spec.js';

/**
 * The body of `POST /containers/create`: a ContainerConfig plus `HostConfig` and
 * `NetworkingConfig`, kept as sent so a forwarding runtime passes every field through.
 */
export interface ContainerCreateBody {
  Image: string;
  Cmd?: string[] | string | null;
  Entrypoint?: string[] | string | null;
  Env?: string[] | null;
  Tty?: boolean;
  OpenStdin?: boolean;
  StdinOnce?: boolean;
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  Labels?: Record<string, string> | null;
  WorkingDir?: string;
  User?: string;
  HostConfig?: { AutoRemove?: boolean; NetworkMode?: string; [field: string]: unknown } | null;
  [field: string]: unknown;
}

/** One `HostConfig.PortBindings` entry: where a container port is published on the host. */
export interface PortBindingSpec {
  hostIp: string;
  hostPort: string;
}

/** One `HostConfig.Mounts` entry as sent; the runtime checks the kinds it honors. */
export interface MountSpec {
  type?: string;
  source?: string;
  target: string;
  readOnly: boolean;
  /** The entry's other keys that hold a value (BindOptions, VolumeOptions, TmpfsOptions…). */
  options: Readonly<Record<string, unknown>>;
}

/**
 * `HostConfig`, typed. Lists are empty and strings `''` when the client left the field out (or
 * sent `null`); `init` stays undefined unless the client chose. Fields no runtime reads here yet
 * are still in the spec's `raw` body.
 */
export interface HostSpec {
  autoRemove: boolean;
  /** `Binds`, each entry parsed once (see {@link BindSpec}). */
  binds: readonly BindSpec[];
  mounts: readonly MountSpec[];
  /** Mount path → mount options (`size=64m,mode=1777`). */
  tmpfs: Readonly<Record<string, string>>;
  volumesFrom: readonly string[];
  readonlyRootfs: boolean;
  capAdd: readonly string[];
  capDrop: readonly string[];
  securityOpt: readonly string[];
  groupAdd: readonly string[];
  deviceCgroupRules: readonly string[];
  privileged: boolean;
  init?: boolean;
  /** `''`, `default`, `bridge`, `host`, `none`, `container:<ref>` or a network's name. */
  networkMode: string;
  ipcMode: string;
  pidMode: string;
  utsMode: string;
  runtime: string;
  /** `80/tcp` → its bindings (an empty list publishes on a port the host picks). */
  portBindings: Readonly<Record<string, readonly PortBindingSpec[]>>;
  publishAllPorts: boolean;
  links: readonly string[];
  extraHosts: readonly string[];
  dns: readonly string[];
  dnsOptions: readonly string[];
  dnsSearch: readonly string[];
  /** The cgroup limits (undefined: unset, as the CLI's 0 and -1 mean; MemorySwap and PidsLimit keep -1, unlimited). */
  memory?: number;
  memorySwap?: number;
  memorySwappiness?: number;
  nanoCpus?: number;
  cpuQuota?: number;
  cpuPeriod?: number;
  cpuShares?: number;
  pidsLimit?: number;
  cpusetCpus?: string;
  cpusetMems?: string;
  /** `RestartPolicy`: `''` and `no` both mean never (the policy's names are checked by the runtime). */
  restartPolicy: { name: string; maximumRetryCount: number };
  /** `LogConfig`: the driver (`''`: the default) and its options. */
  logConfig: { type: string; config: Readonly<Record<string, string>> };
  /** `ConsoleSize` ([height, width], API 1.42) when the client sent a usable one. */
  consoleSize?: { rows: number; cols: number };
  /** `UsernsMode`, `CgroupnsMode`, `Cgroup` (`''`, `host`, `private`, `container:<ref>`…). */
  usernsMode: string;
  cgroupnsMode: string;
  cgroup: string;
  cgroupParent: string;
  volumeDriver: string;
  isolation: string;
  /** `Devices` and `DeviceRequests` entries as sent (the runtime checks what it honors). */
  devices: readonly unknown[];
  deviceRequests: readonly unknown[];
  sysctls: Readonly<Record<string, string>>;
  /** `MaskedPaths` and `ReadonlyPaths`: undefined when absent; present (even `[]`) they replace Docker's defaults. */
  maskedPaths?: readonly string[];
  readonlyPaths?: readonly string[];
  oomKillDisable: boolean;
  /** `OomScoreAdj`; undefined when unset or 0. */
  oomScoreAdj?: number;
}

/** `NetworkingConfig.EndpointsConfig[name]`, as sent: the runtime checks what it honors (null: none given). */
export type EndpointSpec = unknown;

/**
 * The body of `POST /containers/create`, decoded once: types checked, Go's `strslice` and
 * `null`s normalized, each API version's quirks applied (router/container/decode-spec.ts).
 * Policies and runtimes read this; only the Docker runtime's writer (and inspect's echo of the
 * body as sent) read `raw`.
 */
export interface ContainerSpec {
  image: string;
  /** Undefined: the image's. A string was sent as a one-element list, as Go's strslice reads it. */
  cmd?: readonly string[];
  entrypoint?: readonly string[];
  env: readonly string[];
  labels: Readonly<Record<string, string>>;
  tty: boolean;
  openStdin: boolean;
  stdinOnce: boolean;
  attachStdin: boolean;
  attachStdout: boolean;
  attachStderr: boolean;
  user: string;
  workingDir: string;
  hostname: string;
  domainname: string;
  macAddress: string;
  stopSignal: string;
  /** Seconds `docker stop` waits by default; undefined: 10, dockerd's. */
  stopTimeout?: number;
  /** `ExposedPorts`' keys (`80/tcp`). */
  exposedPorts: readonly string[];
  /** `Volumes`' keys: the container paths of anonymous volumes. */
  volumes: readonly string[];
  /** `Healthcheck` as sent (undefined: none); the runtime checks it (its Test kinds, durations). */
  healthcheck?: unknown;
  host: HostSpec;
  /** `NetworkingConfig.EndpointsConfig`: the networks to join at create, by name. */
  networks: Readonly<Record<string, EndpointSpec>>;
  /**
   * The body as sent, after the version shims (see {@link ContainerSpec}); in a local runtime's
   * container, the body it keeps and echoes in inspect (what create settled written over it).
   */
  raw: ContainerCreateBody;
}

const HOST_LISTS = [
  ['volumesFrom', 'VolumesFrom'], ['capAdd', 'CapAdd'], ['capDrop', 'CapDrop'], ['securityOpt', 'SecurityOpt'],
  ['groupAdd', 'GroupAdd'], ['deviceCgroupRules', 'DeviceCgroupRules'], ['links', 'Links'], ['extraHosts', 'ExtraHosts'],
  ['dns', 'Dns'], ['dnsOptions', 'DnsOptions'], ['dnsSearch', 'DnsSearch'],
] as const;
const HOST_STRINGS = [
  ['networkMode', 'NetworkMode'], ['ipcMode', 'IpcMode'], ['pidMode', 'PidMode'], ['utsMode', 'UTSMode'], ['runtime', 'Runtime'],
  ['usernsMode', 'UsernsMode'], ['cgroupnsMode', 'CgroupnsMode'], ['cgroup', 'Cgroup'], ['cgroupParent', 'CgroupParent'], ['volumeDriver', 'VolumeDriver'],
  ['isolation', 'Isolation'],
] as const;
const HOST_FLAGS = [
  ['autoRemove', 'AutoRemove'], ['readonlyRootfs', 'ReadonlyRootfs'], ['privileged', 'Privileged'], ['publishAllPorts', 'PublishAllPorts'], ['oomKillDisable', 'OomKillDisable'],
] as const;

const HOST_INTEGERS = [
  ['memory', 'Memory'], ['memorySwap', 'MemorySwap'], ['memorySwappiness', 'MemorySwappiness'], ['nanoCpus', 'NanoCpus'], ['cpuQuota', 'CpuQuota'],
  ['cpuPeriod', 'CpuPeriod'], ['cpuShares', 'CpuShares'], ['pidsLimit', 'PidsLimit'],
] as const;

const bad = (message: string): EngineError => EngineError.invalidParameter(message);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The words the runtimes used for an entry that is not a string, where they had their own. */
const ENTRY_MESSAGES: Readonly<Record<string, (entry: unknown) => string>> = {
  'HostConfig.Binds': (v) => `HostConfig.Binds: invalid volume specification: '${String(v)}'`,
  'HostConfig.VolumesFrom': (v) => `HostConfig.VolumesFrom: invalid entry "${String(v)}"`,
  'HostConfig.CapAdd': (v) => `HostConfig.CapAdd: invalid capability "${String(v)}"`,
  'HostConfig.CapDrop': (v) => `HostConfig.CapDrop: invalid capability "${String(v)}"`,
  'HostConfig.GroupAdd': () => 'HostConfig.GroupAdd entries must be group names or ids',
};

function list(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad(`${field} must be a list`);
  const odd = value.findIndex((v) => typeof v !== 'string');
  if (odd >= 0) throw bad(ENTRY_MESSAGES[field]?.(value[odd]) ?? `${field} must be a list of strings`);
  return value as string[];
}

/** A list whose entries the runtime checks (`Devices`…). */
function anyList(value: unknown, field: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad(`${field} must be a list`);
  return value;
}

function stringMap(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw bad(`${field} must be an object`);
  for (const [key, v] of Object.entries(value)) if (typeof v !== 'string') throw bad(`${field}["${key}"] must be a string`);
  return value as Record<string, string>;
}

function text(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw bad(`${field} must be a string`);
  return value;
}

function flag(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw bad(`${field} must be a boolean`);
  return value;
}

/** True for a value the Docker CLI sends when the user did not set the field (0, -1, false, '', [], {}, null). */
function unset(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === 0 || v === -1 || v === ''
    || (typeof v === 'object' && Object.keys(v as object).length === 0);
}

/** A cgroup limit: undefined when unset (MemorySwap's and PidsLimit's -1, unlimited, is kept), else a safe integer. */
function integer(value: unknown, field: string): number | undefined {
  if ((field === 'MemorySwap' || field === 'PidsLimit') && value === -1) return -1;
  if (unset(value)) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw bad(`HostConfig.${field} must be an integer`);
  return value;
}

function cpuset(value: unknown, what: string): string | undefined {
  if (unset(value)) return undefined;
  if (typeof value !== 'string') throw bad(`Invalid value ${String(value)} for cpuset ${what}`);
  return value;
}

/** Go's strslice: a string is a one-element list. */
function strslice(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? [value] : (value as string[]);
}

function keys(value: unknown, field?: string): string[] {
  if (field !== undefined && value !== undefined && value !== null && !isObject(value)) throw bad(`${field} must be an object`);
  return isObject(value) ? Object.keys(value) : [];
}

function tmpfsOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw bad('HostConfig.Tmpfs must map paths to options');
  const out: Record<string, string> = {};
  for (const [path, options] of Object.entries(value)) {
    if (options !== null && options !== undefined && typeof options !== 'string') throw bad(`HostConfig.Tmpfs options for "${path}" must be a string`);
    out[path] = options ?? '';
  }
  return out;
}

function mountsOf(value: unknown): MountSpec[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad('HostConfig.Mounts must be a list');
  return value.map((m: unknown) => {
    const { Type, Source, Target, ReadOnly, ...rest } = isObject(m) ? m : {};
    if (typeof Target !== 'string') throw bad(`HostConfig.Mounts: invalid mount config: Target "${String(Target)}" must be an absolute path`);
    if (Source !== undefined && Source !== null && typeof Source !== 'string') throw bad(`HostConfig.Mounts: invalid mount config: Source "${String(Source)}" must be a string`);
    const options = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined && v !== null));
    return {
      ...(Type !== undefined && Type !== null ? { type: text(Type, 'HostConfig.Mounts.Type') } : {}),
      ...(typeof Source === 'string' ? { source: Source } : {}),
      target: Target,
      readOnly: ReadOnly === true,
      options,
    };
  });
}

function restartPolicyOf(value: unknown): HostSpec['restartPolicy'] {
  if (value === undefined || value === null) return { name: '', maximumRetryCount: 0 };
  if (!isObject(value)) throw bad('RestartPolicy must be an object');
  const { Name = '', MaximumRetryCount = 0 } = value;
  if (typeof Name !== 'string') throw bad('RestartPolicy.Name must be a string');
  if (typeof MaximumRetryCount !== 'number' || !Number.isInteger(MaximumRetryCount)) throw bad('RestartPolicy.MaximumRetryCount must be an integer');
  return { name: Name, maximumRetryCount: MaximumRetryCount };
}

function logConfigOf(value: unknown): HostSpec['logConfig'] {
  if (value === undefined || value === null) return { type: '', config: {} };
  if (!isObject(value)) throw bad('HostConfig.LogConfig must be an object with Type and Config');
  const { Type, Config } = value;
  if (Type !== undefined && Type !== null && typeof Type !== 'string') throw bad('HostConfig.LogConfig.Type must be a string');
  if (Config !== undefined && Config !== null && !isObject(Config)) throw bad('HostConfig.LogConfig.Config must be an object of strings');
  for (const [key, v] of Object.entries(Config ?? {})) {
    if (typeof v !== 'string') throw bad(`HostConfig.LogConfig.Config["${key}"] must be a string`);
  }
  return { type: Type ?? '', config: (Config ?? {}) as Record<string, string> };
}

function objectOf(value: unknown, field: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw bad(`${field} must be an object`);
  return value;
}

function endpointsOf(networking: unknown): Record<string, EndpointSpec> {
  return objectOf(objectOf(networking, 'NetworkingConfig').EndpointsConfig, 'NetworkingConfig.EndpointsConfig');
}

function portBindingsOf(value: unknown): Record<string, PortBindingSpec[]> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw bad('HostConfig.PortBindings must be an object');
  const out: Record<string, PortBindingSpec[]> = {};
  for (const [port, bindings] of Object.entries(value)) {
    if (bindings === null || bindings === undefined) {
      out[port] = [];
      continue;
    }
    if (!Array.isArray(bindings)) throw bad(`HostConfig.PortBindings "${port}" must be a list of bindings`);
    out[port] = bindings.map((b: unknown) => {
      const { HostIp = '', HostPort = '' } = isObject(b) ? b : {};
      if (typeof HostIp !== 'string') throw bad(`HostConfig.PortBindings "${port}": HostIp must be a string`);
      if (typeof HostPort !== 'string') throw bad(`HostConfig.PortBindings "${port}": invalid host port "${String(HostPort)}"`);
      return { hostIp: HostIp, hostPort: HostPort };
    });
  }
  return out;
}

/**
 * The typed spec of a create body whose top-level types are already checked (checkCreateBody,
 * router side), also for a body kept from an earlier create (restore). Throws a 400 naming the
 * HostConfig field whose JSON type is wrong.
 *
 * @throws {EngineError} InvalidParameter naming the field.
 * @example
 * containerSpecOf({ Image: 'busybox', Cmd: 'true' }).cmd; // ['true']
 */
export function containerSpecOf(body: ContainerCreateBody): ContainerSpec {
  const h: Record<string, unknown> = isObject(body.HostConfig) ? body.HostConfig : {};
  const host = {
    binds: list(h.Binds, 'HostConfig.Binds').map(parseBindEntry),
    mounts: mountsOf(h.Mounts),
    tmpfs: tmpfsOf(h.Tmpfs),
    portBindings: portBindingsOf(h.PortBindings),
    logConfig: logConfigOf(h.LogConfig),
    restartPolicy: restartPolicyOf(h.RestartPolicy),
    ...(h.Init !== undefined && h.Init !== null ? { init: flag(h.Init, 'HostConfig.Init') } : {}),
  } as Partial<Record<keyof HostSpec, unknown>>;
  for (const [key, field] of HOST_LISTS) host[key] = list(h[field], `HostConfig.${field}`);
  for (const [key, field] of HOST_STRINGS) host[key] = text(h[field], `HostConfig.${field}`);
  for (const [key, field] of HOST_FLAGS) host[key] = flag(h[field], `HostConfig.${field}`);
  for (const [key, field] of HOST_INTEGERS) {
    const n = integer(h[field], field);
    if (n !== undefined) host[key] = n;
  }
  const cpus = cpuset(h.CpusetCpus, 'cpus');
  const mems = cpuset(h.CpusetMems, 'mems');
  if (cpus !== undefined) host.cpusetCpus = cpus;
  if (mems !== undefined) host.cpusetMems = mems;
  host.devices = anyList(h.Devices, 'HostConfig.Devices');
  host.deviceRequests = anyList(h.DeviceRequests, 'HostConfig.DeviceRequests');
  host.sysctls = stringMap(h.Sysctls, 'HostConfig.Sysctls');
  if (h.MaskedPaths !== undefined && h.MaskedPaths !== null) host.maskedPaths = list(h.MaskedPaths, 'HostConfig.MaskedPaths');
  if (h.ReadonlyPaths !== undefined && h.ReadonlyPaths !== null) host.readonlyPaths = list(h.ReadonlyPaths, 'HostConfig.ReadonlyPaths');
  if (h.OomScoreAdj !== undefined && h.OomScoreAdj !== null && h.OomScoreAdj !== 0) {
    if (typeof h.OomScoreAdj !== 'number' || !Number.isSafeInteger(h.OomScoreAdj)) throw bad('HostConfig.OomScoreAdj must be an integer');
    host.oomScoreAdj = h.OomScoreAdj;
  }
  const size = h.ConsoleSize;
  if (Array.isArray(size) && size.length === 2 && size.every((n) => Number.isInteger(n) && n > 0 && n <= 0xffff)) {
    host.consoleSize = { rows: size[0] as number, cols: size[1] as number };
  }
  const cmd = strslice(body.Cmd);
  const entrypoint = strslice(body.Entrypoint);
  return {
    image: body.Image,
    ...(cmd !== undefined ? { cmd } : {}),
    ...(entrypoint !== undefined ? { entrypoint } : {}),
    env: body.Env ?? [],
    labels: body.Labels ?? {},
    tty: body.Tty === true,
    openStdin: body.OpenStdin === true,
    stdinOnce: body.StdinOnce === true,
    attachStdin: body.AttachStdin === true,
    attachStdout: body.AttachStdout === true,
    attachStderr: body.AttachStderr === true,
    user: typeof body.User === 'string' ? body.User : '',
    workingDir: typeof body.WorkingDir === 'string' ? body.WorkingDir : '',
    hostname: typeof body.Hostname === 'string' ? body.Hostname : '',
    domainname: typeof body.Domainname === 'string' ? body.Domainname : '',
    macAddress: typeof body.MacAddress === 'string' ? body.MacAddress : '',
    stopSignal: typeof body.StopSignal === 'string' ? body.StopSignal : '',
    ...(typeof body.StopTimeout === 'number' && Number.isInteger(body.StopTimeout) ? { stopTimeout: body.StopTimeout } : {}),
    exposedPorts: keys(body.ExposedPorts, 'ExposedPorts'),
    volumes: keys(body.Volumes),
    ...(body.Healthcheck !== undefined && body.Healthcheck !== null ? { healthcheck: body.Healthcheck } : {}),
    host: host as unknown as HostSpec,
    networks: endpointsOf(body.NetworkingConfig),
    raw: body,
  };
}

/**
 * The spec with `HostConfig` fields changed (`docker update`'s, as dockerd keeps them), decoded
 * again so every typed field agrees with its `raw` body.
 *
 * @throws {EngineError} InvalidParameter naming a field whose JSON type is wrong.
 * @example
 * withHostConfig(spec, { Memory: 1 << 26 }).host.memory; // 67108864
 */
export function withHostConfig(spec: ContainerSpec, fields: Readonly<Record<string, unknown>>): ContainerSpec {
  const { raw } = spec;
  return containerSpecOf({ ...raw, HostConfig: { ...(raw.HostConfig ?? {}), ...fields } });
}

/**
 * `HostConfig` fields alone (`docker update`'s body), typed as at create.
 *
 * @throws {EngineError} InvalidParameter naming a field whose JSON type is wrong.
 * @example
 * hostSpecOf({ CpuShares: 512 }).cpuShares; // 512
 */
export function hostSpecOf(fields: Readonly<Record<string, unknown>>): HostSpec {
  return containerSpecOf({ Image: '', HostConfig: { ...fields } }).host;
}

/** The HostSpec keys {@link withHostSpec} writes, with their `HostConfig` field. */
const WRITABLE: ReadonlyMap<string, string> = new Map<string, string>([...HOST_LISTS, ...HOST_STRINGS]);

/** HostSpec's string and string-list fields: the ones {@link withHostSpec} writes. */
export type WritableHostSpec = Pick<HostSpec, (typeof HOST_LISTS)[number][0] | (typeof HOST_STRINGS)[number][0]>;

/**
 * The spec with some of its string and list `HostConfig` fields changed, typed and in `raw`
 * alike, without decoding the body again (create's settled values: references pinned to ids,
 * the capabilities a policy drops).
 *
 * @example
 * withHostSpec(spec, { networkMode: `container:${id}` }).raw.HostConfig?.NetworkMode; // 'container:<id>'
 */
export function withHostSpec(spec: ContainerSpec, changes: Partial<WritableHostSpec>): ContainerSpec {
  const entries = Object.entries(changes).filter(([key]) => WRITABLE.has(key));
  if (entries.length === 0) return spec;
  const rawHost: Record<string, unknown> = { ...(isObject(spec.raw.HostConfig) ? spec.raw.HostConfig : {}) };
  for (const [key, value] of entries) rawHost[WRITABLE.get(key)!] = Array.isArray(value) ? [...value] : value;
  return { ...spec, host: { ...spec.host, ...changes }, raw: { ...spec.raw, HostConfig: rawHost } };
}

/**
 * The spec with its labels replaced, typed and in `raw` alike (the owner label the engine sets).
 *
 * @example
 * withLabels(spec, { ...spec.labels, a: 'b' }).raw.Labels; // { …, a: 'b' }
 */
export function withLabels(spec: ContainerSpec, labels: Readonly<Record<string, string>>): ContainerSpec {
  return { ...spec, labels, raw: { ...spec.raw, Labels: { ...labels } } };
}
