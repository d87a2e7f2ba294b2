import { createSocket } from 'node:dgram';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../../engine-api/container-spec.js';
import { Beneath, BeneathError, type Ownership } from '../../../linux/beneath.js';
import type { LocalNetworkSettings } from '../../local/local-container.js';
import { containerHostname, LOOPBACK_HOSTS } from './etc-names.js';
import { extraHostLines } from './extra-hosts.js';
import { LaunchGate } from './launch-gate.js';
import type { NetworkUserns } from './network-userns.js';
import { exposedPortKeys, portRequests, type PortMap, type PortProto, type PortRequest } from './port-bindings.js';
import { SLIRP_MAC, SLIRP_NET, SlirpStack } from './slirp-stack.js';

/** What every container network of one runtime shares, fixed at the runtime's construction. */
export interface NetworkHost {
  /** The slirp4netns binary. */
  slirp4netns: string;
  /** A private (0700) directory for the FIFOs and API sockets (short paths: a socket path has 108 bytes). */
  runDir: string;
  /** Host address of a published port whose binding names none (dockerd's `--ip`). */
  defaultHostIp: string;
  /**
   * The server is not root (rootless): the container's network namespace belongs to bwrap's user
   * namespace, which slirp4netns must join to configure it (host root needs no such step).
   */
  rootless?: boolean;
  /**
   * Rootless, with user-defined networks: the server's own user namespace (network-userns.ts),
   * where their namespaces live and under which every container is launched.
   */
  userns?: Promise<NetworkUserns>;
  /**
   * Rootless with a mapped range: the user namespace slirp4netns joins instead of bwrap's (the
   * server's mapped one, userns/rootless-userns.ts, where the server's user has every capability
   * over the namespaces of all containers, a non-root user's nested ones too).
   */
  usernsPath?: () => Promise<string>;
}

/**
 * The container gets its own network namespace with a user-mode stack, as dockerd's default
 * `bridge` mode gives one with a veth: NetworkMode unset, `default`, `bridge` or a user-defined
 * network's name (whose bridge it joins as well, sandbox-networks.ts). `host` keeps the server's
 * network, `none` a namespace with loopback only, and `container:ID` joins that container's.
 */
export function ownsNetwork(spec: ContainerSpec): boolean {
  const mode = spec.host.networkMode;
  return !(mode === 'host' || mode === 'none' || mode.startsWith('container:'));
}

/** Whether the container is on the default `bridge` network (NetworkMode unset, `default` or `bridge`). */
export function onDefaultBridge(spec: ContainerSpec): boolean {
  const mode = spec.host.networkMode;
  return mode === '' || mode === 'default' || mode === 'bridge';
}

/** What a container's user-defined networks add to its start (sandbox-networks.ts). */
export interface UserNetworkPlan {
  /** Their DNS servers, first in its resolv.conf. */
  nameservers: string[];
  /** Only `--internal` networks: no user-mode stack, so no way out and no published ports. */
  internalOnly: boolean;
  /** Plugs the container (its namespace's pid) into each of them, before its command runs. */
  attach(pid: number): Promise<void>;
  /** Its endpoints as inspect shows them, read live (connect and disconnect change them). */
  endpoints(): Record<string, Record<string, unknown>>;
}

/**
 * One start of one container on its own network: the files it reads its network from
 * (/etc/resolv.conf, /etc/hosts), the gate holding its command, then the stack and the
 * published ports, and at the end all of it taken down again.
 */
export class ContainerNetwork {
  private stack: SlirpStack | undefined;
  private readonly apiSocket: string;

  private constructor(
    private readonly host: NetworkHost,
    private readonly spec: ContainerSpec,
    private readonly requests: PortRequest[],
    readonly gate: LaunchGate,
    /** Container path -> host file, bound over the root filesystem copy (bwrap-args' `files`). */
    readonly files: Record<string, string>,
    base: string,
    private readonly user: UserNetworkPlan | undefined,
    private readonly hostname: string,
  ) {
    this.apiSocket = `${base}.sock`;
  }

  /**
   * Before the launch: the port requests (checked again, as at create), the container's
   * resolv.conf and hosts files in its state directory (`dir`), their mount points in its root
   * filesystem copy (an empty file, where the image has none: a read-only root cannot get one
   * later), and the gate.
   */
  static async prepare(host: NetworkHost, id: string, spec: ContainerSpec, dir: string, rootfs: string, user?: UserNetworkPlan, linkHosts: readonly string[] = []): Promise<ContainerNetwork> {
    const requests = portRequests(spec);
    const hostname = containerHostname(id, spec);
    const files: Record<string, string> = {};
    for (const [path, text] of [['/etc/resolv.conf', resolvConf(user?.nameservers ?? [], user?.internalOnly !== true)], ['/etc/hosts', hostsFile(hostname, [...extraHostLines(spec), ...linkHosts])]] as const) {
      if (!(await mountPoint(rootfs, path))) continue;
      const file = join(dir, path.slice('/etc/'.length));
      writeFileSync(file, text, { mode: 0o644 });
      files[path] = file;
    }
    const base = join(host.runDir, id.slice(0, 16));
    return new ContainerNetwork(host, spec, requests, await LaunchGate.create(base), files, base, user, hostname);
  }

  /**
   * After the launch: waits for bwrap's child, starts the stack on its namespace, publishes the
   * ports, and only then lets the command run. Undefined when bwrap ended before it made the
   * container (its own error is in the container's output). On failure the caller kills bwrap,
   * which is still holding the command.
   */
  async connect(ended: Promise<unknown>): Promise<LocalNetworkSettings | undefined> {
    const pid = await this.gate.childPid(ended);
    if (pid === undefined) {
      this.gate.remove();
      return undefined;
    }
    if (this.user?.internalOnly !== true) this.stack = await SlirpStack.start(this.host.slirp4netns, pid, this.requests.length > 0 ? this.apiSocket : undefined,
      this.host.usernsPath ? await this.host.usernsPath() : this.host.rootless === true);
    await this.user?.attach(pid);
    await this.hostsV6();
    const ports: PortMap = Object.fromEntries(exposedPortKeys(this.spec).map((key) => [key, null]));
    for (const r of this.requests) {
      const hostIp = r.hostIp === '' ? this.host.defaultHostIp : r.hostIp;
      const hostPort = await this.publish(r, hostIp);
      (ports[r.key] ??= []).push({ HostIp: hostIp, HostPort: String(hostPort) });
    }
    this.gate.release();
    return {
      // With networks of namespaces we make (sandbox-networks.ts), the user-mode stack is only the
      // container's way out and where its published ports arrive: its endpoints (the shared
      // `bridge` too) are those networks'. Without them, `bridge` is the stack's own address.
      network: onDefaultBridge(this.spec) && !this.user ? 'bridge' : '',
      ipAddress: SLIRP_NET.ipAddress, prefixLen: SLIRP_NET.prefixLen, gateway: SLIRP_NET.gateway, macAddress: SLIRP_MAC, ports,
      ...(this.user ? { endpoints: this.user.endpoints } : {}),
    };
  }

  /**
   * On a network with IPv6, its address and the hostname are a line of /etc/hosts too, as dockerd
   * writes one after the IPv4 line (its first such network's). Appended to the server's own file
   * (the bind follows its inode) while the gate still holds the command.
   */
  private async hostsV6(): Promise<void> {
    const file = this.files['/etc/hosts'];
    const v6 = this.user ? Object.values(this.user.endpoints()).map((e) => e.GlobalIPv6Address).find((a) => typeof a === 'string' && a !== '') : undefined;
    if (file && typeof v6 === 'string') await appendFile(file, `${v6}\t${this.hostname}\n`);
  }

  /** Takes the stack down (its host ports close with it) and removes the gate and socket. */
  async stop(): Promise<void> {
    await this.stack?.stop();
    this.stack = undefined;
    this.gate.remove();
    rmSync(this.apiSocket, { force: true });
  }

  /**
   * Opens one host port. An ephemeral one (`-p PORT`, `-P`) is picked by the kernel, as
   * dockerd's allocator picks from the same ip_local_port_range (slirp4netns takes no port 0),
   * and picked again once if another process took it meanwhile.
   */
  private async publish(r: PortRequest, hostIp: string): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const hostPort = r.hostPort !== 0 ? r.hostPort : await freePort(r.proto, hostIp);
      try {
        await this.stack!.forward(r.proto, hostIp, hostPort, r.port);
        return hostPort;
      } catch (error) {
        if (r.hostPort !== 0 || attempt > 0) throw error;
      }
    }
  }
}

/**
 * An empty regular file at `path` (under /etc) in the root filesystem copy, to bind the generated
 * file over, made through {@link Beneath}: the container controls its root. A link, a FIFO or
 * another file that is not regular there is replaced (bwrap would resolve a link while it builds
 * the root); a directory there is left alone and not bound over (false). A link at /etc itself is
 * refused with a 400, never followed: dockerd would resolve it inside the container's root, and
 * this server resolves nothing a container controls.
 */
export async function mountPoint(rootfs: string, path: string, owner: Ownership = {}): Promise<boolean> {
  const root = await Beneath.open(rootfs);
  try {
    const { dir, name } = await root.parentOf(path, { mode: 0o755, ...owner });
    try {
      const stat = await dir.lstatChild(name);
      if (stat?.isFile()) return true;
      if (stat?.isDirectory()) return false;
      // The container's root owns it, as the rest of its root filesystem copy: a commit of a container that moved it takes it.
      await dir.writeFile(name, '', { mode: 0o644, ...owner });
      return true;
    } finally {
      await dir.close();
    }
  } catch (error) {
    throw startRefusal(error);
  } finally {
    await root.close();
  }
}

/** Makes the root filesystem copy's /etc, owned by `owner`, when it has none; a link there is refused (a 400), never followed. */
export async function ensureEtc(rootfs: string, owner: Ownership): Promise<void> {
  const root = await Beneath.open(rootfs);
  try {
    await (await root.dir('etc', { mode: 0o755, ...owner })).close();
  } catch (error) {
    throw startRefusal(error);
  } finally {
    await root.close();
  }
}

/** A refusal of Beneath's as a 400 naming the container path (`/etc is a symbolic link…`). */
function startRefusal(error: unknown): unknown {
  if (!(error instanceof BeneathError)) return error;
  const path = `/${error.path.replace(/^\/+/, '')}`;
  const what = error.code === 'ELOOP' ? `${path} is a symbolic link` : error.code === 'ENOTDIR' ? `${path} is not a directory` : error.message;
  return EngineError.invalidParameter(`the container's ${what} in its root filesystem: the server follows no link a container made there (dockerd would resolve it inside the container)`);
}

/**
 * The container's resolv.conf: its user networks' DNS, then slirp4netns's DNS forwarder, with the host's search domains and
 * options, as dockerd writes one for the default bridge (the host's nameservers are replaced:
 * the forwarder reaches them from the host's side).
 */
export function resolvConf(nameservers: string[], slirp: boolean): string {
  let kept: string[] = [];
  try {
    kept = readFileSync('/etc/resolv.conf', 'utf8').split('\n').filter((l) => /^\s*(search|domain|options)\s/.test(l));
  } catch {
    // No resolv.conf on the host: the forwarder alone.
  }
  // A user network's DNS first: it answers its containers' names and refuses the rest, which
  // the resolver then asks the forwarder (dockerd's 127.0.0.11 forwards them itself).
  const servers = [...nameservers, ...(slirp ? [SLIRP_NET.dns] : [])];
  return [...servers.map((s) => `nameserver ${s}`), ...kept].join('\n') + '\n';
}

/** dockerd's /etc/hosts for a bridge container: the loopback names, ExtraHosts' lines and its legacy links' (bridge-links.ts), then its address and hostname. */
function hostsFile(hostname: string, extra: readonly string[]): string {
  return [...LOOPBACK_HOSTS, ...extra, `${SLIRP_NET.ipAddress}\t${hostname}`].join('\n') + '\n';
}

/** A host port free now on `hostIp` for `proto`, from the kernel's ephemeral range. */
function freePort(proto: PortProto, hostIp: string): Promise<number> {
  return new Promise((resolve, reject) => {
    if (proto === 'udp') {
      const socket = createSocket('udp4');
      socket.once('error', reject);
      socket.bind(0, hostIp, () => {
        const { port } = socket.address();
        socket.close(() => resolve(port));
      });
      return;
    }
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: hostIp, port: 0, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
