/**
 * Legacy links on the default bridge (`--link NAME[:ALIAS]` without a user network), as dockerd
 * makes them (moby daemon/links/links.go, daemon/container_operations.go): the linking container
 * gets an /etc/hosts line for each linked container, and environment variables naming it, its
 * exposed ports at its bridge address, and its environment. Links on user-defined networks are
 * DNS aliases instead (network-links.ts), with no such files or variables, as on dockerd.
 */

/** A linked container as the linking one's start sees it. */
export interface BridgeLinkTarget {
  /** The link's alias (the name when none was given). */
  alias: string;
  /** The linked container's name, without a leading `/`. */
  name: string;
  /** Its hostname (its Hostname, else its short id). */
  hostname: string;
  /** Its address on the default bridge. */
  ip: string;
  /** Its environment (Config.Env). */
  env: readonly string[];
  /** Its exposed ports, `80/tcp` keys. */
  ports: readonly string[];
}

/** dockerd's /etc/hosts line for a link: the address, then the alias, the hostname, and the name unless it is the alias. */
export function linkHostsLine(t: BridgeLinkTarget): string {
  const names = [t.alias, t.hostname, ...(t.alias === t.name ? [] : [t.name])];
  return `${t.ip}\t${names.join(' ')}`;
}

/**
 * The variables dockerd gives a container for one link, in its order: `<ALIAS>_PORT` (the
 * lowest port), then for each run of three or more consecutive port numbers its `_START`/`_END`
 * forms, then each port's `_PORT_<n>_<PROTO>`, `_ADDR`, `_PORT`, `_PROTO`; `<ALIAS>_NAME`
 * (`/<linking name>/<alias>`); `<ALIAS>_ENV_<NAME>` for each of its variables but HOME and PATH.
 * ALIAS is upper-cased with `-` as `_`.
 */
export function linkEnvironment(linkingName: string, t: BridgeLinkTarget): string[] {
  const alias = t.alias.toUpperCase().replaceAll('-', '_');
  const ports = t.ports.map((key) => {
    const [port = '', proto = 'tcp'] = key.split('/');
    return { port: Number(port), proto: proto.toLowerCase() };
  }).filter((p) => Number.isInteger(p.port))
    // dockerd's order: by number, tcp first where a number has both.
    .sort((a, b) => a.port - b.port || (a.proto === 'tcp' ? -1 : b.proto === 'tcp' ? 1 : 0));
  const env: string[] = [];
  const first = ports[0];
  if (first) env.push(`${alias}_PORT=${first.proto}://${t.ip}:${first.port}`);
  const key = (port: number, proto: string): string => `${alias}_PORT_${port}_${proto.toUpperCase()}`;
  // A run of three or more ports, each at most one above the one before it counts (whatever their
  // protocols, as dockerd's nextContiguous counts), also gets its range.
  for (let i = 0; i < ports.length;) {
    let j = i;
    while (j + 1 < ports.length && ports[j + 1]!.port <= ports[i]!.port + (j - i) + 1) j += 1;
    if (j > i + 1) {
      const p = ports[i]!;
      const q = ports[j]!;
      env.push(`${key(p.port, p.proto)}_START=${p.proto}://${t.ip}:${p.port}`, `${key(p.port, p.proto)}_ADDR=${t.ip}`, `${key(p.port, p.proto)}_PROTO=${p.proto}`,
        `${key(p.port, p.proto)}_PORT_START=${p.port}`, `${key(p.port, q.proto)}_END=${q.proto}://${t.ip}:${q.port}`, `${key(p.port, q.proto)}_PORT_END=${q.port}`);
      i = j + 1;
    } else {
      i += 1;
    }
  }
  for (const { port, proto } of ports) {
    env.push(`${key(port, proto)}=${proto}://${t.ip}:${port}`, `${key(port, proto)}_ADDR=${t.ip}`, `${key(port, proto)}_PORT=${port}`, `${key(port, proto)}_PROTO=${proto}`);
  }
  env.push(`${alias}_NAME=/${linkingName}/${t.alias}`);
  for (const entry of t.env) {
    const at = entry.indexOf('=');
    if (at < 0) continue;
    const name = entry.slice(0, at);
    if (name === 'HOME' || name === 'PATH') continue;
    env.push(`${alias}_ENV_${name}=${entry.slice(at + 1)}`);
  }
  return env;
}

/** `extra` added to `env` where `env` does not set the name already (the container's own variables win, as dockerd merges them). */
export function withLinkEnvironment(env: readonly string[], extra: readonly string[]): string[] {
  const set = new Set(env.map((e) => e.split('=', 1)[0]));
  return [...extra.filter((e) => !set.has(e.split('=', 1)[0])), ...env];
}
