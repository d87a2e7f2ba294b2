import { EngineError } from '../../../../engine-api/engine-error.js';

/** The bridge driver options the sandbox honors, read from a network's `Options`. */
export interface BridgeSettings {
  /** `com.docker.network.driver.mtu`: the MTU of the network's interfaces. */
  mtu?: number;
  /** `com.docker.network.bridge.enable_icc=false`: containers reach the gateway, not each other. */
  isolated: boolean;
}

export const MTU = 'com.docker.network.driver.mtu';
export const ICC = 'com.docker.network.bridge.enable_icc';
const MASQUERADE = 'com.docker.network.bridge.enable_ip_masquerade';
const DEFAULT_BRIDGE = 'com.docker.network.bridge.default_bridge';
/** docker-compose 1's networks set it beside EnableIPv6; dockerd 20.10 keeps it and its network's EnableIPv6 stays as the body says. */
const ENABLE_IPV6 = 'com.docker.network.enable_ipv6';

/** Go's strconv.ParseBool, which dockerd's bridge driver reads its flags with. */
function parseBool(key: string, value: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw EngineError.invalidParameter(`network option ${key}: invalid boolean ${JSON.stringify(value)}`);
}

/**
 * `docker network create -o`: the options of dockerd's bridge driver that the sandbox can honor,
 * checked and kept as given (inspect shows them so). Its networks are a bridge in a namespace of
 * their own and each container leaves through its own user-mode stack: the MTU and inter-container
 * traffic are honored; masquerading (always on: the user-mode stack is a NAT) and not being the
 * default bridge are accepted at those values only; `com.docker.network.enable_ipv6` is kept as
 * dockerd 20.10 keeps it (the network's EnableIPv6 is the body's). Every other option (the host bridge's name,
 * the host binding address, an interface prefix, a key dockerd does not know) is refused by name.
 */
export function bridgeOptions(options: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(options)) {
    if (typeof value !== 'string') throw EngineError.invalidParameter(`network option ${key} must be a string`);
    if (key === MTU) {
      if (!/^\d{1,5}$/.test(value) || Number(value) < 68 || Number(value) > 65535) throw EngineError.invalidParameter(`network option ${key}: invalid MTU ${JSON.stringify(value)} (68 to 65535)`);
    } else if (key === ICC || key === ENABLE_IPV6) {
      parseBool(key, value);
    } else if (key === MASQUERADE) {
      if (!parseBool(key, value)) throw EngineError.invalidParameter(`network option ${key}=false is not supported by the sandbox runtime (its containers always leave through a user-mode NAT)`);
    } else if (key === DEFAULT_BRIDGE) {
      if (parseBool(key, value)) throw EngineError.invalidParameter(`network option ${key}=true is not supported by the sandbox runtime (a user-defined network is never the default bridge)`);
    } else {
      throw EngineError.invalidParameter(`network option ${key} is not supported by the sandbox runtime`);
    }
    out[key] = value;
  }
  return out;
}

/** What a network's kept options make its hub do. */
export function bridgeSettings(options: Record<string, string> | undefined): BridgeSettings {
  const mtu = options?.[MTU];
  const icc = options?.[ICC];
  return { ...(mtu ? { mtu: Number(mtu) } : {}), isolated: icc !== undefined && !parseBool(ICC, icc) };
}
