import { spawn, type ChildProcess } from 'node:child_process';
import { holderReady, unrefHolder } from './namespace-holder.js';
import type { BridgeSettings } from './bridge-options.js';
import { answerQuery } from './dns-answer.js';
import { ipGroupsIn, ipIn, type NetnsTools } from './netns-ip.js';

/** The bridge device in a network's namespace. */
const BRIDGE = 'br0';

/** How long the namespace's process may take to come up. */

/**
 * The process that holds a network's namespace and carries its DNS: it binds UDP port 53 there
 * (on every address, so it answers on the gateway's) and relays each query to the server as one
 * JSON line on stdout, and each reply from stdin back to its sender. It exits when its stdin
 * closes: a server that ends, even by SIGKILL, takes every network namespace with it (and with
 * them the bridges and the veths of the containers). Plain JavaScript with no imports, passed to
 * `node -e`: it runs outside the server's module graph, in the namespace unshare made.
 */
const RELAY = `
const dgram = require('node:dgram');
const socket = dgram.createSocket('udp4');
socket.on('message', (msg, rinfo) => process.stdout.write(JSON.stringify({ a: rinfo.address, p: rinfo.port, d: msg.toString('base64') }) + '\\n'));
socket.on('error', (e) => { process.stderr.write(String(e.message) + '\\n'); process.exit(1); });
socket.bind(53, '0.0.0.0', () => process.stdout.write('ready\\n'));
let rest = '';
process.stdin.on('data', (chunk) => {
  rest += chunk.toString('utf8');
  let nl;
  while ((nl = rest.indexOf('\\n')) >= 0) {
    const line = rest.slice(0, nl);
    rest = rest.slice(nl + 1);
    try { const m = JSON.parse(line); socket.send(Buffer.from(m.d, 'base64'), m.p, m.a); } catch {}
  }
});
process.stdin.on('end', () => process.exit(0));
`;

/** One container's leg on a network: the veth end inside it, its address and MAC. */
export interface HubEndpoint {
  /** Interface name inside the container (`eth1`…). */
  ifname: string;
  ipAddress: string;
  /** Its IPv6 address, on a network with IPv6 ({@link NetworkHub.start}'s `v6`). */
  ipv6Address?: string;
  macAddress: string;
}

/** A network's IPv6 side: the bridge's address (the gateway) and the subnet's prefix length. */
export interface HubV6 {
  gateway: string;
  prefixLen: number;
}

/**
 * One user-defined network, made of namespaces we create: a network namespace of its own (held
 * by the relay process) with a Linux bridge carrying the gateway address, and one veth pair per
 * attached container, whose other end is moved into the container's network namespace. The
 * host's interfaces, routes and firewall are never touched. The DNS answers come from `lookup`
 * (the network's current names, and the asker's link aliases by its address), asked for each query the relay passes on.
 */
export class NetworkHub {
  private readonly exited: Promise<void>;
  /** The bridge side's commands of attaches and detaches waiting for the `ip` under way ({@link inHub}). */
  private readonly queued: { lines: string[]; resolve: () => void; reject: (error: Error) => void }[] = [];
  private flushing = false;

  private constructor(
    private readonly tools: NetnsTools,
    private readonly child: ChildProcess,
    private readonly prefixLen: number,
    private readonly settings: BridgeSettings,
    private readonly v6?: HubV6,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
  }

  /** The namespace's holder pid (its network namespace is `/proc/PID/ns/net`). */
  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** Makes the namespace, its bridge with `gateway/prefixLen` (and `v6`'s gateway), and its DNS on port 53; `settings`: the network's driver options. */
  static async start(tools: NetnsTools & { unshare: string }, gateway: string, prefixLen: number, lookup: (name: string, from: string) => string[] | undefined, settings: BridgeSettings = { isolated: false }, v6?: HubV6): Promise<NetworkHub> {
    // Rootless, the namespace is made in the server's own user namespace (network-userns.ts).
    const [program, args] = tools.userns
      ? (await tools.userns).wrap(tools.unshare, ['--net', '--', process.execPath, '-e', RELAY])
      : [tools.unshare, ['--net', '--', process.execPath, '-e', RELAY]];
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const hub = new NetworkHub(tools, child, prefixLen, settings, v6);
    let lines;
    try {
      lines = await holderReady(child, tools.unshare, { timeout: "the network's namespace", ended: "the network's namespace ended" });
      await ipIn(tools, hub.pid, [
        'link set lo up',
        `link add ${BRIDGE} type bridge`,
        `addr add ${gateway}/${prefixLen} dev ${BRIDGE}`,
        // nodad: usable at once (duplicate address detection would hold it a second or two; the addresses are ours to hand out).
        ...(v6 ? [`addr add ${v6.gateway}/${v6.prefixLen} dev ${BRIDGE} nodad`] : []),
        `link set ${BRIDGE} up`,
      ]);
    } catch (error) {
      await hub.stop();
      throw error;
    }
    lines.on('line', (line) => {
      let message: { a: string; p: number; d: string };
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        return;
      }
      const reply = answerQuery(Buffer.from(message.d, 'base64'), (name) => lookup(name, message.a));
      if (reply) child.stdin?.write(JSON.stringify({ a: message.a, p: message.p, d: reply.toString('base64') }) + '\n');
    });
    unrefHolder(child);
    return hub;
  }

  /**
   * Plugs the container of `pid` in: a veth pair whose bridge side is named after the pid and the
   * interface (unique while the container's namespace lives; the pair goes with that namespace),
   * and whose other side becomes `ifname` there, with its address and MAC, up; then `extra`
   * commands in the container's namespace. The network's MTU goes on both ends; with
   * inter-container traffic off, the bridge side is an isolated port (it reaches the gateway,
   * never another isolated port).
   */
  async attach(pid: number, endpoint: HubEndpoint, extra: string[] = []): Promise<void> {
    const veth = vethName(pid, endpoint.ifname);
    const mtu = this.settings.mtu === undefined ? '' : ` mtu ${this.settings.mtu}`;
    await this.inHub([
      `link add ${veth}${mtu} type veth peer name ${endpoint.ifname}${mtu} netns ${pid}`,
      `link set ${veth} master ${BRIDGE}`,
      ...(this.settings.isolated ? [`link set ${veth} type bridge_slave isolated on`] : []),
      `link set ${veth} up`,
    ]);
    await ipIn(this.tools, pid, [
      `link set ${endpoint.ifname} address ${endpoint.macAddress}`,
      `addr add ${endpoint.ipAddress}/${this.prefixLen} dev ${endpoint.ifname}`,
      ...(endpoint.ipv6Address && this.v6 ? [`addr add ${endpoint.ipv6Address}/${this.v6.prefixLen} dev ${endpoint.ifname} nodad`] : []),
      `link set ${endpoint.ifname} up`,
      ...extra,
    ]);
  }

  /** Unplugs the container of `pid` (deleting one end of the pair deletes both). */
  async detach(pid: number, ifname: string): Promise<void> {
    await this.inHub([`link del ${vethName(pid, ifname)}`]);
  }

  /**
   * Runs `lines` in the network's namespace. The first caller's run at once; callers that come
   * while an `ip` runs there wait for it and then share one (ipGroupsIn): 16 containers started
   * at once on a network make a few processes for their bridge sides, not 16. Each caller still
   * gets its own lines' error.
   */
  private inHub(lines: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ lines, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0);
        try {
          const errors = await ipGroupsIn(this.tools, this.pid, batch.map((b) => b.lines));
          batch.forEach((b, i) => (errors[i] ? b.reject(errors[i]!) : b.resolve()));
        } catch (error) {
          for (const b of batch) b.reject(error as Error);
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Ends the namespace (its stdin closed, then SIGKILL if it lingers) and waits for it. */
  async stop(): Promise<void> {
    this.child.stdin?.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 1000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** The bridge side's name: `v<pid>-<ifname>`, within the 15 bytes of an interface name. */
function vethName(pid: number, ifname: string): string {
  return `v${pid}-${ifname}`.slice(0, 15);
}
