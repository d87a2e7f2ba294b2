/** `CAP_NET_RAW`, `net_raw` → `NET_RAW` (dockerd accepts every spelling). */
const capabilityName = (cap: string): string => cap.toUpperCase().replace(/^CAP_/, '');

/**
 * A HostConfig with the capabilities the policy takes away (`withoutCapabilities`) added to its
 * `CapDrop`, except those its `CapAdd` names (or `ALL`): what inspect then shows is what the
 * container has. A malformed CapAdd or CapDrop is left as sent, for the runtime's 400.
 */
export function withoutCapabilities<T extends Record<string, unknown>>(host: T | null | undefined, caps: readonly string[] | undefined): T | null | undefined {
  if (!caps || caps.length === 0) return host;
  const add = host?.CapAdd ?? [];
  const drop = host?.CapDrop ?? [];
  if (!Array.isArray(add) || !Array.isArray(drop)) return host;
  const named = new Set([...add, ...drop].filter((c): c is string => typeof c === 'string').map(capabilityName));
  const missing = caps.filter((cap) => !named.has(cap) && !named.has('ALL'));
  return missing.length === 0 ? host : ({ ...host, CapDrop: [...drop, ...missing] } as unknown as T);
}
