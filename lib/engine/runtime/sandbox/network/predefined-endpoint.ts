import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';

const isSet = (v: unknown): boolean => v !== undefined && v !== null && v !== ''
  && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

/**
 * The endpoint config of the predefined network a container joins (`bridge`, `host`, `none`):
 * `IPAMConfig.LinkLocalIPs` and `DriverOpts` are refused by name, as on a user-defined network
 * (network-membership.ts), rather than taken and dropped: the sandbox's user-mode stack adds no
 * link-local address and has no driver to give options to. dockerd adds the address and keeps
 * the options.
 *
 * @throws {EngineError} InvalidParameter naming the field.
 */
export function predefinedEndpoints(spec: ContainerSpec): void {
  for (const [name, value] of Object.entries(spec.networks)) {
    if (!['bridge', 'host', 'none', 'default'].includes(name) || value === null || typeof value !== 'object') continue;
    const config = value as Record<string, unknown>;
    const where = `NetworkingConfig.EndpointsConfig "${name}"`;
    const ipam = config.IPAMConfig !== null && typeof config.IPAMConfig === 'object' ? config.IPAMConfig as Record<string, unknown> : {};
    if (isSet(ipam.LinkLocalIPs)) throw EngineError.invalidParameter(`${where}: IPAMConfig.LinkLocalIPs is not supported by the sandbox runtime (its user-mode network adds no link-local address)`);
    if (isSet(config.DriverOpts)) throw EngineError.invalidParameter(`${where}: DriverOpts is not supported by the sandbox runtime (its predefined networks have no driver to pass them to)`);
  }
}
