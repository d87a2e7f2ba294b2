import { hostname as hostHostname } from 'node:os';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';

/** dockerd's /etc/hosts loopback lines, which every container's hosts file starts with. */
export const LOOPBACK_HOSTS = [
  '127.0.0.1\tlocalhost',
  '::1\tlocalhost ip6-localhost ip6-loopback',
  'fe00::0\tip6-localnet',
  'ff00::0\tip6-mcastprefix',
  'ff02::1\tip6-allnodes',
  'ff02::2\tip6-allrouters',
];

/** The name a container runs with: its Hostname, the host's in host network mode, else its short id (dockerd's). */
export function containerHostname(id: string, spec: ContainerSpec): string {
  if (spec.hostname !== '') return spec.hostname;
  return spec.host.networkMode === 'host' ? hostHostname() : id.slice(0, 12);
}
