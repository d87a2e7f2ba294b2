import { isIP } from 'node:net';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';

/**
 * `HostConfig.ExtraHosts` (`docker run --add-host NAME:IP`, compose's `extra_hosts`, a build's
 * `extrahosts`) as the lines dockerd adds to a container's /etc/hosts, after the loopback names
 * and before the container's own address: `IP\tNAME`, in the order given. An entry is split at
 * its first colon, so an IPv6 address may follow. dockerd's words for a bad entry; `host-gateway`
 * (the address of the host as dockerd's bridge sees it) is refused by name, since the sandbox's
 * user-mode networks have no such address to give.
 *
 * @throws {EngineError} InvalidParameter for an entry that is not `NAME:IP`.
 */
export function extraHostLines(spec: ContainerSpec): string[] {
  return spec.host.extraHosts.map((entry) => {
    const colon = entry.indexOf(':');
    const name = colon > 0 ? entry.slice(0, colon) : '';
    const ip = colon > 0 ? entry.slice(colon + 1) : '';
    if (name === '' || /\s/.test(name) || ip === '') throw EngineError.invalidParameter(`bad format for add-host: "${entry}"`);
    if (ip === 'host-gateway') {
      throw EngineError.invalidParameter(`HostConfig.ExtraHosts "${entry}": host-gateway is not supported by the sandbox runtime (its user-mode networks give the host no address of its own)`);
    }
    const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
    if (isIP(bare) === 0) throw EngineError.invalidParameter(`invalid IP address in add-host: "${ip}"`);
    return `${bare}\t${name}`;
  });
}
