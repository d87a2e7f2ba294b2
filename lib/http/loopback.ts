import { isIP } from 'node:net';

/**
 * Whether a URL's host name (as `URL.hostname` gives it, IPv6 in brackets or not) names this
 * machine: `localhost` and its subdomains (RFC 6761 §6.3), 127.0.0.0/8, ::1 and
 * IPv4-mapped 127.x. Used where plain HTTP or a missing credential check is tolerable only when
 * nothing leaves the host.
 *
 * @example
 * isLoopbackHost('127.0.0.1') // true
 * isLoopbackHost('[::1]') // true
 * isLoopbackHost('registry.example.com') // false
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^0:0:0:0:0:0:0:1$/.test(host);
  return false;
}
