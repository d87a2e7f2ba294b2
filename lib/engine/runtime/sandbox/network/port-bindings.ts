import { isIPv4 } from 'node:net';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';

/** A transport the user-mode stack forwards (slirp4netns has no SCTP). */
export type PortProto = 'tcp' | 'udp';

/** One host port to open for a container port: `-p [HOST_IP:][HOST_PORT:]PORT[/PROTO]`, or `-P`. */
export interface PortRequest {
  /** The container port and its protocol, as a `NetworkSettings.Ports` key says them (`80/tcp`). */
  key: string;
  port: number;
  proto: PortProto;
  /** The host address to listen on; empty: the runtime's default (dockerd's `--ip`, 0.0.0.0). */
  hostIp: string;
  /** The host port; 0: an ephemeral port chosen at start (`-p PORT`, `-P`). */
  hostPort: number;
}

/** `NetworkSettings.Ports` as dockerd reports it: each exposed port, with its bindings or null. */
export type PortMap = Record<string, { HostIp: string; HostPort: string }[] | null>;

/**
 * The container ports a create body exposes (`Config.ExposedPorts`, which the CLI fills from
 * `-p`, `--expose` and, at create, the image's), and every `HostConfig.PortBindings` key, as
 * `port/proto` keys (a key without a protocol means tcp, as in dockerd's nat.ParsePortSpec).
 */
export function exposedPortKeys(spec: ContainerSpec): string[] {
  const keys = new Set<string>();
  for (const key of [...spec.exposedPorts, ...Object.keys(spec.host.portBindings)]) keys.add(portKey(key).key);
  return [...keys];
}

/**
 * The host ports a create body asks for: every `HostConfig.PortBindings` entry, then with
 * `PublishAllPorts` (`-P`) an ephemeral port for each exposed port that has no binding, as
 * dockerd publishes them. Throws a 400 naming what the sandbox's user-mode stack cannot do
 * (SCTP, an IPv6 or malformed host address, a host port range, a port out of range).
 */
export function portRequests(spec: ContainerSpec): PortRequest[] {
  const { host } = spec;
  const requests: PortRequest[] = [];
  for (const [rawKey, list] of Object.entries(host.portBindings)) {
    const { key, port, proto } = publishable(rawKey, 'HostConfig.PortBindings');
    for (const entry of list) requests.push({ key, port, proto, hostIp: hostAddress(entry.hostIp, rawKey), hostPort: hostPortNumber(entry.hostPort, rawKey) });
  }
  if (host.publishAllPorts) {
    const bound = new Set(requests.map((r) => r.key));
    for (const key of exposedPortKeys(spec)) {
      if (bound.has(key)) continue;
      const { port, proto } = publishable(key, 'ExposedPorts (PublishAllPorts)');
      requests.push({ key, port, proto, hostIp: '', hostPort: 0 });
    }
  }
  return requests;
}

/** `80`, `80/tcp`, `53/udp`: the key dockerd shows, the port and the protocol. */
function portKey(raw: string): { key: string; port: number; proto: string } {
  const match = /^(\d{1,5})(?:\/([a-z]+))?$/i.exec(raw);
  const port = match ? Number(match[1]) : NaN;
  if (!match || port < 1 || port > 65535) throw EngineError.invalidParameter(`invalid port specification: "${raw}"`);
  const proto = (match[2] ?? 'tcp').toLowerCase();
  if (!['tcp', 'udp', 'sctp'].includes(proto)) throw EngineError.invalidParameter(`invalid proto: ${proto}`);
  return { key: `${port}/${proto}`, port, proto };
}

function publishable(raw: string, field: string): { key: string; port: number; proto: PortProto } {
  const { key, port, proto } = portKey(raw);
  if (proto === 'sctp') {
    throw EngineError.invalidParameter(`${field} "${raw}": publishing sctp ports is not supported by the sandbox runtime (its user-mode network forwards tcp and udp)`);
  }
  return { key, port, proto: proto as PortProto };
}

function hostAddress(value: string, key: string): string {
  if (value === '') return '';
  if (isIPv4(value)) return value;
  throw EngineError.invalidParameter(`HostConfig.PortBindings "${key}": HostIp "${value}" is not supported by the sandbox runtime (an IPv4 address only; its user-mode network forwards no IPv6)`);
}

function hostPortNumber(value: string, key: string): number {
  if (value === '' || value === '0') return 0;
  if (/^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= 65535) return Number(value);
  if (/^\d+-\d+$/.test(value)) {
    throw EngineError.invalidParameter(`HostConfig.PortBindings "${key}": a host port range ("${value}") is not supported by the sandbox runtime; name one port, or none for an ephemeral one`);
  }
  throw EngineError.invalidParameter(`HostConfig.PortBindings "${key}": invalid host port "${value}"`);
}
