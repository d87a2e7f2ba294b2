import { createConnection } from 'node:net';
import { OffLoopChild } from '../../../linux/off-loop-command.js';
import type { PortProto } from './port-bindings.js';
import { slirpCommand } from './slirp-command.js';

/** The addresses slirp4netns gives the namespace (its defaults for 10.0.2.0/24). */
export const SLIRP_NET = { ipAddress: '10.0.2.100', prefixLen: 24, gateway: '10.0.2.2', dns: '10.0.2.3', subnet: '10.0.2.0/24' } as const;

/** The interface's MAC: dockerd's 02:42 prefix followed by the IPv4 address, as dockerd derives it. */
export const SLIRP_MAC = '02:42:0a:00:02:64';

/** How long slirp4netns may take to report ready before the start fails. */
const READY_TIMEOUT_MS = 10_000;

/**
 * One slirp4netns process: the user-mode TCP/IP stack of one container's network namespace.
 * It makes `eth0` there (10.0.2.100/24, gateway 10.0.2.2, DNS forwarder 10.0.2.3) and carries
 * the container's outbound traffic through ordinary sockets of the server. Options, and why:
 *
 * - `--disable-host-loopback`: 10.0.2.2 would otherwise reach the host's 127.0.0.1, and with it
 *   Redis, the token service and every other loopback-only service.
 * - `--enable-sandbox` and `--enable-seccomp`: it parses the container's packets as root, so it
 *   pivots into an empty root, keeps only CAP_NET_BIND_SERVICE and loads its syscall filter
 *   (started under `unshare --mount --propagation slave`, so its pivot unmounts nothing of the
 *   host's: slirp-command.ts).
 * - `--exit-fd`: one end of a socket pair the server holds; slirp4netns exits when it closes,
 *   so a server that dies (even by SIGKILL) leaves no stack behind.
 * - `--api-socket` (only when ports are published): `add_hostfwd` opens each published port.
 *
 * Spawned by a helper process (off-loop-command.ts), which holds its pipes: a spawn from the
 * event loop held it 10-15 ms a start on a busy machine.
 */
export class SlirpStack {
  private constructor(private readonly child: OffLoopChild, private readonly apiSocket: string | undefined) {}

  /** Starts slirp4netns on the network namespace of `pid`; resolves once it has configured eth0. */
  static async start(binary: string, pid: number, apiSocket: string | undefined, joinUserns: boolean | string = false): Promise<SlirpStack> {
    // Rootless, slirp4netns 1.2's sandbox fails (its parent's setegid(0) is refused to a non-root
    // user): it runs without it, as the server's own unprivileged user, still under its seccomp filter.
    const args = ['--configure', '--mtu=65520', '--disable-host-loopback', ...(joinUserns ? [] : ['--enable-sandbox']), '--enable-seccomp',
      `--macaddress=${SLIRP_MAC}`, '--ready-fd=3', '--exit-fd=4'];
    if (apiSocket !== undefined) args.push(`--api-socket=${apiSocket}`);
    // By path: given a pid, slirp4netns would join the namespace's user namespace too, where host root
    // has no capability left to enter it (a non-root User runs in bwrap's own user namespace).
    // Rootless, the server's user owns bwrap's user namespace and has no capability over its
    // network namespace from outside: slirp4netns joins that user namespace first.
    // A path: the namespace to join (a rootless server's mapped one, above the container's own).
    if (joinUserns) args.push(`--userns-path=${typeof joinUserns === 'string' ? joinUserns : `/proc/${pid}/ns/user`}`);
    args.push('--netns-type=path', `/proc/${pid}/ns/net`, 'eth0');
    // Its sandbox's mount namespace is made below one of slave mounts (slirp-command.ts).
    const [file, argv] = slirpCommand(binary, args);
    const child = OffLoopChild.start(file, argv, { extraFds: 2, readyFd: 3 });
    const stack = new SlirpStack(child, apiSocket);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        child.ready.catch((error: Error & { code?: string }) => {
          const exit = child.exit;
          if (error.code !== undefined || !exit) throw new Error(`cannot run slirp4netns: ${error.message}`);
          const said = exit.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('WARNING')).slice(-3).join('; ');
          throw new Error(`slirp4netns exited before the network was up: ${said || `status ${String(exit.code ?? exit.signal)}`}`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`slirp4netns did not become ready in ${READY_TIMEOUT_MS / 1000}s`)), READY_TIMEOUT_MS);
        }),
      ]);
    } catch (error) {
      await stack.stop();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return stack;
  }

  /** Opens `hostIp:hostPort` on the host, forwarded to the container's `port`. */
  async forward(proto: PortProto, hostIp: string, hostPort: number, port: number): Promise<void> {
    if (this.apiSocket === undefined) throw new Error('slirp4netns was started without its API socket');
    const answer = await apiCall(this.apiSocket, { execute: 'add_hostfwd', arguments: { proto, host_addr: hostIp, host_port: hostPort, guest_port: port } });
    const error = (answer as { error?: { desc?: string } }).error;
    if (error) {
      // slirp_add_hostfwd fails when the host port is taken; dockerd's words for that case.
      throw new Error(/slirp_add_hostfwd failed/.test(error.desc ?? '')
        ? `Bind for ${hostIp}:${hostPort} failed: port is already allocated`
        : `cannot publish ${hostIp}:${hostPort}/${proto}: ${error.desc ?? 'slirp4netns refused'}`);
    }
  }

  /** Ends the stack (its exit descriptor closed, then SIGKILL if it lingers) and waits for it. */
  async stop(): Promise<void> {
    this.child.closeFd(4);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 1000);
    await this.child.exited;
    clearTimeout(timer);
  }
}

/** One request on slirp4netns's API socket (one JSON object each way, one connection each). */
function apiCall(path: string, request: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let text = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('slirp4netns API did not answer')));
    socket.on('connect', () => socket.end(JSON.stringify(request)));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new Error(`slirp4netns API answered "${text.slice(0, 200)}"`));
      }
    });
  });
}
