import { CREATE_FIELDS } from './create-fields.js';

/**
 * Struct field names found below the top level of a create body, and in the other JSON bodies
 * the policy checkpoint reads (RestartPolicy, LogConfig,
 * Mounts and their options, PortBindings entries, Healthcheck, EndpointSettings, Devices,
 * DeviceRequests, Ulimits, the blkio throttles).
 */
const NESTED_FIELDS = [
  'Name', 'MaximumRetryCount', 'Type', 'Config', 'Source', 'Target', 'ReadOnly', 'Consistency', 'BindOptions', 'Propagation',
  'NonRecursive', 'CreateMountpoint', 'VolumeOptions', 'NoCopy', 'DriverConfig', 'Options', 'TmpfsOptions', 'SizeBytes', 'Mode',
  'HostIp', 'HostPort', 'Test', 'Interval', 'Timeout', 'Retries', 'StartPeriod', 'StartInterval', 'IPAMConfig', 'IPv4Address',
  'IPv6Address', 'LinkLocalIPs', 'Links', 'Aliases', 'NetworkID', 'EndpointID', 'Gateway', 'IPAddress', 'IPPrefixLen',
  'IPv6Gateway', 'GlobalIPv6Address', 'GlobalIPv6PrefixLen', 'MacAddress', 'DriverOpts', 'PathOnHost', 'PathInContainer',
  'CgroupPermissions', 'Driver', 'Count', 'DeviceIDs', 'Capabilities', 'Soft', 'Hard', 'Path', 'Rate', 'Weight', 'EndpointsConfig',
  'HostConfig', 'Labels',
  // The other bodies a policy reads: docker update (HostConfig's resources), volume and network
  // create, network connect and disconnect.
  'Container', 'EndpointConfig', 'Force', 'IPAM', 'Internal', 'Attachable', 'Ingress', 'EnableIPv6', 'CheckDuplicate', 'Scope',
  'ConfigOnly', 'ConfigFrom', 'Network', 'Subnet', 'IPRange', 'AuxiliaryAddresses', 'ClusterVolumeSpec',
];

/** Lower-case name → the name as Go's structs spell it. */
const CANONICAL: ReadonlyMap<string, string> = new Map(
  [...CREATE_FIELDS.map((f) => f.replace(/^HostConfig\./, '')), ...NESTED_FIELDS].map((f) => [f.toLowerCase(), f]),
);

/** Fields whose value is a map: its keys are data (label names, ports, paths, network names), never respelled. */
const MAPS: ReadonlySet<string> = new Set([
  'Labels', 'ExposedPorts', 'Volumes', 'PortBindings', 'Tmpfs', 'Sysctls', 'Config', 'EndpointsConfig', 'DriverOpts', 'Options',
  'StorageOpt', 'AuxiliaryAddresses',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A JSON body with every struct key spelled as Go's structs spell it. dockerd's decoder
 * (encoding/json) matches a key to a field whatever its case, the later key winning when two
 * name one field: `{"hostconfig":{"privileged":true}}` is a privileged container there. Decoding
 * the body so, once, means the policy, the runtime and a forwarding runtime's dockerd all read
 * the same fields. Keys that name no known field, and the keys of maps (labels, ports, paths,
 * network names), are kept as sent.
 *
 * @example
 * withGoFieldCase({ image: 'busybox', hostconfig: { Privileged: true } }); // { Image: 'busybox', HostConfig: { Privileged: true } }
 */
export function withGoFieldCase<T>(value: T): T {
  return respell(value, false, 0) as T;
}

/**
 * How deep the known structs go (EndpointsConfig → name → IPAMConfig → field is 4): deeper
 * values are kept as sent, so a hostile body nested 100000 deep costs nothing here.
 */
const MAX_DEPTH = 8;

function respell(value: unknown, isMap: boolean, depth: number): unknown {
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((v) => respell(v, false, depth + 1));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = isMap ? key : CANONICAL.get(key.toLowerCase()) ?? key;
    // The later key wins, as in Go; a respelled key is written where the canonical one would be.
    if (name !== key) delete out[name];
    out[name] = respell(v, MAPS.has(name) && !isMap, depth + 1);
  }
  return out;
}
