/**
 * What the checkpoint tells a policy about a container's networks, read from the runtime's
 * inspect body here, on the route side: the policies see only `ContainerTarget.networks`
 * (policy/joined-networks.ts judges them) and read no container JSON.
 */

/** The modes that name no user network: the predefined ones and another container's stack. */
const NOT_A_USER_NETWORK = new Set(['', 'default', 'bridge', 'host', 'none']);

/**
 * The networks a container's start joins by name, from its inspect body: a user network's
 * `HostConfig.NetworkMode` and the keys of `NetworkSettings.Networks` (its endpoints).
 */
export function networksJoined(inspect: Readonly<Record<string, unknown>>): string[] {
  const out = new Set<string>();
  const mode = (inspect.HostConfig as { NetworkMode?: unknown } | undefined)?.NetworkMode;
  if (typeof mode === 'string' && !NOT_A_USER_NETWORK.has(mode) && !mode.startsWith('container:')) out.add(mode);
  const networks = (inspect.NetworkSettings as { Networks?: unknown } | undefined)?.Networks;
  if (networks && typeof networks === 'object') {
    for (const name of Object.keys(networks)) if (!NOT_A_USER_NETWORK.has(name)) out.add(name);
  }
  return [...out];
}
