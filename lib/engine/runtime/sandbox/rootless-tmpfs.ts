import { spawn, type ChildProcess } from 'node:child_process';
import { readlink } from 'node:fs/promises';
import { runOffLoop, type CommandResult } from '../../linux/off-loop-command.js';
import { holderReady, unrefHolder } from './network/namespace-holder.js';
import type { NetworkUserns } from './network/network-userns.js';
import { SharedTmpfs, type ContainerTmpfs, type TmpfsNamespace } from './shared-tmpfs.js';

export type { ContainerTmpfs, TmpfsNamespace };

/** The holder: says it runs, then waits for its stdin (the server's) to close. */
const HOLD = 'echo ready; exec cat >/dev/null';

/**
 * The containers' `HostConfig.Tmpfs` mounts on a rootless server. It cannot mount on the host, so
 * each tmpfs is mounted in a mount namespace of its own user namespace (the one its containers
 * run under, network/network-userns.ts), held by a small process made on first use:
 * `<dir>/<id>/<n>` is an empty directory on the host and a tmpfs of the mount's size and mode in
 * that namespace. Launchers and execs enter it ({@link inTmpfsNamespace}) before bwrap builds the
 * container's, so a container and its execs bind the same tmpfs, as they do on a root server,
 * and each is capped by its own `size=` (the per-container total is checked at create,
 * tmpfs-options.ts). Mounted and unmounted inside it with util-linux `mount`, as the namespace's
 * root (the server's user), off the event loop. The paths are the server's own (its 0700
 * tmpfsDir), never a container's.
 */
export class RootlessTmpfs extends SharedTmpfs {
  protected override readonly where = " in the server's mount namespace";
  private holder: Promise<{ child: ChildProcess; mnt: string; owner: string }> | undefined;
  private made: { mnt: string; owner: string } | undefined;
  /** The holder now in use (its exit forgets it, {@link forget}). */
  private live: object | undefined;

  constructor(dir: string, private readonly userns: Promise<NetworkUserns>, private readonly tools: { unshare: string; nsenter: string; mount: string; umount: string }) {
    super(dir);
  }

  namespace(): TmpfsNamespace | undefined {
    return this.made;
  }

  /**
   * mount(8)/umount(8) as the namespace's root, inside the mount namespace the holder keeps (made
   * on the first mount); an unmount before any holder has nothing to unmount.
   */
  protected override async runMount(tool: 'mount' | 'umount', args: readonly string[]): Promise<CommandResult | undefined> {
    const ns = tool === 'mount' ? await this.hold() : this.made;
    if (!ns) return undefined;
    return runOffLoop(this.tools.nsenter, ['--preserve-credentials', `--user=${ns.owner}`, `--mount=${ns.mnt}`, '--', this.tools[tool], ...args]);
  }

  /** The holder of the mount namespace, made once (unshare --mount in the server's user namespace). */
  private hold(): Promise<{ child: ChildProcess; mnt: string; owner: string }> {
    this.holder ??= (async () => {
      const userns = await this.userns;
      const [program, args] = userns.wrap(this.tools.unshare, ['--mount', '--', '/bin/sh', '-c', HOLD]);
      const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      try {
        const lines = await holderReady(child, program, { timeout: 'the mount namespace of the rootless tmpfs mounts', ended: 'the mount namespace of the rootless tmpfs mounts could not be made' });
        lines.close();
      } catch (error) {
        child.kill('SIGKILL');
        throw error;
      }
      unrefHolder(child);
      const held = { child, mnt: `/proc/${child.pid ?? 0}/ns/mnt`, owner: userns.file };
      this.made = { mnt: held.mnt, owner: held.owner };
      this.live = held;
      child.once('exit', () => this.forget(held)); // its pid may be reused: its /proc path must not be entered again
      if (child.exitCode !== null || child.signalCode !== null) this.forget(held);
      return held;
    })().catch((error: unknown) => {
      this.holder = undefined;
      throw error;
    });
    return this.holder;
  }

  /** Drops a holder that ended: the next prepare makes a new one (its pid's /proc path may name another process by then). */
  private forget(held: object): void {
    if (this.live !== held) return;
    this.live = undefined;
    this.made = undefined;
    this.holder = undefined;
  }

  /** Ends the holder (the mount namespace lives on while a container launched in it does). */
  async close(): Promise<void> {
    const held = await this.holder?.catch(() => undefined);
    held?.child.stdin?.end();
  }
}

/**
 * `program args` run inside the tmpfs mount namespace `ns`: the mount namespace is joined by
 * nsenter while in its user namespace (only there does the server's user hold the capability for
 * it). When `program` is itself nsenter joining that same user namespace first (`--user=FILE` as
 * its first or second argument, `sameUserns`), the mount namespace joins that call: nsenter
 * cannot enter the namespace it is already in. Otherwise a nsenter of its own goes first, and the
 * program then enters a user namespace below it (a container's, an owner's range).
 */
export function inTmpfsNamespace(ns: TmpfsNamespace, nsenter: string, program: string, args: readonly string[], sameUserns = false): [string, string[]] {
  const at = args.slice(0, 2).findIndex((a) => a === `--user=${ns.owner}`);
  if (program === nsenter && at >= 0) return [program, [...args.slice(0, at + 1), `--mount=${ns.mnt}`, ...args.slice(at + 1)]];
  if (sameUserns && program === nsenter) return [program, [`--mount=${ns.mnt}`, ...args]];
  return [nsenter, ['--preserve-credentials', `--user=${ns.owner}`, `--mount=${ns.mnt}`, '--', program, ...args]];
}

/** Whether the process `pid` runs in the namespace's own user namespace (its execs join the mount namespace in the same nsenter call). */
export async function inOwnerUserns(ns: TmpfsNamespace, pid: number): Promise<boolean> {
  const [own, its] = await Promise.all([readlink(ns.owner).catch(() => ''), readlink(`/proc/${pid}/ns/user`).catch(() => '-')]);
  return own === its;
}
