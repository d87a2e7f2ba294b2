import { BlockList, isIP } from 'node:net';

/** Tests whether a client address lies in one address or CIDR block. */
export type AclIpRange = (ip: string | undefined) => boolean;

/**
 * Compiles `10.0.0.0/8`, `192.168.1.7`, `fd00::/8` or `::1` into a matcher. Node's BlockList
 * compares IPv4-mapped IPv6 addresses (`::ffff:127.0.0.1`, what Express reports on a dual-stack
 * socket) with IPv4 blocks and the other way round, so a rule written for IPv4 works either way.
 *
 * @throws {Error} describing what is wrong with the address or prefix length.
 * @example
 * compileAclIpRange('127.0.0.0/8')('::ffff:127.0.0.1'); // true
 */
export function compileAclIpRange(spec: string): AclIpRange {
  const slash = spec.indexOf('/');
  const address = slash === -1 ? spec : spec.slice(0, slash);
  const version = isIP(address);
  if (version === 0) throw new Error('must be an IPv4 or IPv6 address or CIDR block, e.g. "10.0.0.0/8"');
  const bits = version === 4 ? 32 : 128;
  const prefixText = slash === -1 ? String(bits) : spec.slice(slash + 1);
  const prefix = /^[0-9]{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= bits)) throw new Error(`has a prefix length that is not 0–${bits}`);
  const list = new BlockList();
  list.addSubnet(address, prefix, version === 4 ? 'ipv4' : 'ipv6');

  return (ip) => {
    if (ip === undefined) return false;
    // A zone index (fe80::1%eth0) names the interface, not part of the address.
    const bare = ip.includes('%') ? ip.slice(0, ip.indexOf('%')) : ip;
    const clientVersion = isIP(bare);
    if (clientVersion === 0) return false;
    return list.check(bare, clientVersion === 4 ? 'ipv4' : 'ipv6');
  };
}
