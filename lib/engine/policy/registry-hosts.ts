import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { DOCKER_HUB_DOMAINS, isDomain, splitRepositoryName } from '../../reference/repository-name.js';
import type { ConnectCheck } from '../../http/checked-fetch.js';

/**
 * Hosts a pull or push from the server's own network must not reach for a tenant unless an
 * allow-list names them: loopback (the host's own services), link-local (cloud metadata at
 * 169.254.169.254) and the unspecified addresses, which connect to the host itself.
 */
const HOST_ONLY = new BlockList();
HOST_ONLY.addSubnet('127.0.0.0', 8, 'ipv4');
HOST_ONLY.addSubnet('169.254.0.0', 16, 'ipv4');
HOST_ONLY.addSubnet('0.0.0.0', 8, 'ipv4');
HOST_ONLY.addAddress('::1', 'ipv6');
HOST_ONLY.addAddress('::', 'ipv6');
HOST_ONLY.addSubnet('fe80::', 10, 'ipv6');

/** `host[:port]` of a registry as a connection would read it: lower case, IPs in their canonical form (`127.1` → `127.0.0.1`), Docker Hub as `docker.io`. */
function canonical(domain: string): { host: string; port?: string } {
  const lower = domain.toLowerCase();
  if (DOCKER_HUB_DOMAINS.includes(lower)) return { host: 'docker.io' };
  let url: URL;
  try {
    // WHATWG parsing is what the registry client's fetch does to the host: decimal, hex and short IPv4 forms included.
    url = new URL(`http://${lower}/`);
  } catch {
    return { host: lower };
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = /:(\d+)$/.exec(lower.replace(/^\[[^\]]*\]/, ''))?.[1];
  return port === undefined ? { host } : { host, port };
}

/** An IPv4 address an IPv4-mapped IPv6 address (`::ffff:7f00:1`) stands for. */
function mappedIPv4(host: string): string | undefined {
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (!m) return undefined;
  if (m[2] === undefined) return m[1];
  const hi = parseInt(m[1] as string, 16);
  const lo = parseInt(m[2], 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

function hostOnly(host: string): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIPv4(host)) return HOST_ONLY.check(host, 'ipv4');
  if (isIPv6(host)) {
    const v4 = mappedIPv4(host);
    return v4 !== undefined ? HOST_ONLY.check(v4, 'ipv4') : HOST_ONLY.check(host, 'ipv6');
  }
  return false;
}

/** The registry a familiar reference names (`docker.io` when none). */
function registryOf(ref: string): string {
  const name = ref.split('@')[0] as string;
  return splitRepositoryName(name).domain ?? 'docker.io';
}

/**
 * Checks an allow-list of registry hosts once (`registry.example.com`, `10.0.0.5:5000`,
 * `docker.io`); an entry without a port allows every port of that host.
 *
 * @throws {TypeError} naming `option` when it is not a list of `host[:port]`.
 */
export function registryHostList(value: unknown, option: string): readonly { host: string; port?: string }[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((h) => typeof h === 'string' && isDomain(h))) {
    throw new TypeError(`${option} must be a list of registry hosts (host or host:port, e.g. "registry.example.com:5000")`);
  }
  return value.map((h: string) => canonical(h));
}

/**
 * Why a tenant may not pull `ref` from (or push it to) its registry, or undefined when it may:
 * with an allow-list, a host it does not name; without one, a loopback or link-local host
 * (`localhost`, 127.0.0.0/8, ::1, 169.254.0.0/16, fe80::/10) written as such. A DNS name that
 * resolves to one of those is not caught unless an allow-list is set.
 */
export function registryHostRefusal(ref: string, allowed: readonly { host: string; port?: string }[] | undefined): string | undefined {
  const domain = registryOf(ref);
  const { host, port } = canonical(domain);
  if (allowed !== undefined) {
    if (allowed.some((a) => a.host === host && (a.port === undefined || a.port === port))) return undefined;
    return `${ref}: registry ${domain} is not one of the registry hosts tenants may pull from or push to (registryHosts)`;
  }
  if (hostOnly(host)) return `${ref}: registry ${domain} is a loopback or link-local host, which tenants may not pull from or push to (list the hosts they may name in registryHosts)`;
  return undefined;
}

/**
 * The check every connection of a tenant's registry operation passes when it is made (the
 * registry, each redirect, the token realm; see `checkedFetch`): with an allow-list, the
 * connection's `host:port` must be one it names, whatever it resolves to; without one, the
 * address the name resolved to must not be loopback, link-local or unspecified (IPv4-mapped
 * forms included), so a DNS name pointing there is refused too.
 *
 * @example
 * registryConnectCheck(undefined)({ host: 'myname', port: 5000, address: '127.0.0.1' }); // 'myname:5000 resolves to 127.0.0.1, …'
 */
export function registryConnectCheck(allowed: readonly { host: string; port?: string }[] | undefined): ConnectCheck {
  return ({ host, port, address }) => {
    // Docker Hub's registry host (registry-1.docker.io) reads as docker.io, as in the list.
    const named = canonical(isIPv6(host) ? `[${host}]` : host);
    const shown = isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
    if (allowed !== undefined) {
      if (allowed.some((a) => a.host === named.host && (a.port === undefined || a.port === String(port)))) return undefined;
      return `${shown} is not one of the registry hosts tenants may reach (registryHosts)`;
    }
    if (hostOnly(named.host) || hostOnly(address)) {
      return `${shown}${address !== named.host ? ` resolves to ${address}, ` : ' is '}a loopback or link-local address, which tenants may not reach (list the hosts they may name in registryHosts)`;
    }
    return undefined;
  };
}
