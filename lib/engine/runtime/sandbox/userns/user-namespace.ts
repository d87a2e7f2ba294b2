import { spawn } from 'node:child_process';
import { closeSync, writeFileSync } from 'node:fs';
import type { IdMap } from './id-map.js';
import { holdUserNamespace } from './held-namespace.js';

/**
 * The user namespace every sandbox container runs in: made by this (root) server with the full
 * map of {@link IdMap} written from outside, so container root and every other container user
 * are ordinary, unprivileged host ids; a root-owned host file stays read-only to all of them, and
 * what they create on a bind belongs to the mapped ids. One namespace serves all containers, as
 * one range serves all of dockerd's with `userns-remap`; each container's other namespaces (PID,
 * mount, IPC, UTS, cgroup) are its own and owned by it.
 *
 * No process holds it: the server keeps a descriptor of it open, and launchers reach it as
 * `/proc/<server pid>/fd/<n>` ({@link file}). It goes away with the server, even on a crash, and
 * nothing is left behind.
 */
export class UserNamespace {
  private constructor(private fd: number | undefined, readonly map: IdMap) {}

  /** The namespace's file for nsenter `--user=` and bwrap `--userns` (opened by a launcher shell). */
  get file(): string {
    if (this.fd === undefined) throw new Error('the user namespace is closed');
    return `/proc/${process.pid}/fd/${this.fd}`;
  }

  /**
   * Makes the namespace: util-linux `unshare --user` starts a process in a new one (cat, which
   * waits on a pipe), the map is written to its uid_map and gid_map, the server opens its
   * namespace file, and the process is let go.
   */
  static async create(map: IdMap, unshare = 'unshare'): Promise<UserNamespace> {
    const holder = spawn(unshare, ['--user', '--', 'cat'], { stdio: ['pipe', 'ignore', 'pipe'] });
    // Written from outside by root: a full range, which an unprivileged writer could not map.
    const fd = await holdUserNamespace(holder, (pid) => {
      writeFileSync(`/proc/${pid}/uid_map`, `0 ${map.uid} ${map.size}\n`);
      writeFileSync(`/proc/${pid}/gid_map`, `0 ${map.gid} ${map.size}\n`);
    });
    return new UserNamespace(fd, map);
  }

  /** Lets the namespace go once no container or exec is in it. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
