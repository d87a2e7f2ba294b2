import { spawn, type ChildProcess } from 'node:child_process';
import { holderReady, unrefHolder } from './namespace-holder.js';

/** How long the holder may take to make its namespace. */

/**
 * The holder: prints a line once it runs in the new user namespace (unshare has made it and
 * written its maps before it execs the shell), then waits for its stdin to close. The server
 * holds that stdin: a server that ends, even by SIGKILL, takes the holder along.
 */
const HOLD = 'echo ready; exec cat >/dev/null';

/**
 * The user namespace a rootless server (not root) owns, made once and held by a small process,
 * in which the user-defined networks' namespaces, bridges and veths live and under which every
 * container is launched. A network namespace belongs to the user namespace that made it, and
 * moving a veth end into a container's namespace takes CAP_NET_ADMIN over both: a process of
 * this namespace has every capability here and in each user namespace made below it (bwrap's,
 * one per container), never in a sibling. So the hubs (network-hub.ts) and `ip` (netns-ip.ts)
 * run in it, and the containers are made below it; the server itself, which owns it, reaches
 * each of them from outside as before (slirp4netns, exec). Container root maps onto the
 * server's user, the namespace's one id (uid and gid 0 here).
 */
export class NetworkUserns {
  private constructor(private readonly child: ChildProcess | undefined, private readonly nsenter: string, private readonly adopted?: string) {}

  /**
   * A namespace the runtime already holds (`file`: its namespace file, e.g. the one a mapped
   * subordinate range lives in), whose containers run below it: the networks live there too.
   */
  static adopt(file: string, nsenter: string): NetworkUserns {
    return new NetworkUserns(undefined, nsenter, file);
  }

  /** Makes and holds the namespace (util-linux `unshare`); rejects with unshare's words when the kernel refuses it. */
  static async start(tools: { unshare: string; nsenter: string }): Promise<NetworkUserns> {
    const child = spawn(tools.unshare, ['--user', '--map-root-user', '--', '/bin/sh', '-c', HOLD], { stdio: ['pipe', 'pipe', 'pipe'] });
    let lines;
    try {
      lines = await holderReady(child, tools.unshare, { timeout: "the engine's user namespace", ended: "the engine's user namespace could not be made" });
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    lines.close();
    unrefHolder(child);
    return new NetworkUserns(child, tools.nsenter);
  }

  /** The namespace's file. */
  get file(): string {
    return this.adopted ?? `/proc/${this.child?.pid ?? 0}/ns/user`;
  }

  /**
   * nsenter's options that join it keeping the server's ids (`--preserve-credentials`: they are
   * the namespace's root; nsenter's own switch to uid 0 would call setgroups, which an
   * unprivileged map denies), with every capability there.
   */
  enterArgs(): string[] {
    return ['--preserve-credentials', `--user=${this.file}`];
  }

  /**
   * `program args` run in the namespace: nsenter's argv, `extra` options (another namespace to
   * join) first; `below`: a user namespace made below it (a container's) entered instead.
   */
  wrap(program: string, args: readonly string[], extra: readonly string[] = [], below?: string): [string, string[]] {
    const user = below === undefined ? this.enterArgs() : ['--preserve-credentials', `--user=${below}`];
    return [this.nsenter, [...user, ...extra, '--', program, ...args]];
  }

  /** Ends the holder (the namespace lives on while a container in it does). */
  stop(): void {
    this.child?.stdin?.end();
  }
}
