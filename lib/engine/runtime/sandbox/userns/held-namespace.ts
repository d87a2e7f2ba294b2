import type { ChildProcess } from 'node:child_process';
import { openSync, readlinkSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';

/** How long a new namespace is waited for: 200 × 10 ms. */
const ATTEMPTS = 200;
const INTERVAL_MS = 10;

/**
 * The namespace of a holder process that `unshare --user -- cat` (stdin a pipe, stderr a pipe)
 * put in a new user namespace: waits until its namespace is neither the server's nor `also` (the
 * one it was started in, for a nested namespace), lets `map` write its maps, opens its namespace
 * file, and lets the holder go (its stdin closed). The server keeps the descriptor: the
 * namespace lives as long as it, or a process in it, does. Rejects with unshare's words when the
 * holder fails or ends first.
 */
export async function holdUserNamespace(holder: ChildProcess, map: (pid: number) => Promise<void> | void, also?: string): Promise<number> {
  let stderr = '';
  holder.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const failed = new Promise<never>((_resolve, reject) => {
    holder.on('error', reject);
    holder.on('exit', (code) => reject(new Error(`unshare --user exited with ${String(code)}: ${stderr.trim()}`)));
  });
  failed.catch(() => undefined);
  try {
    const pid = holder.pid;
    if (pid === undefined) return await failed;
    const own = readlinkSync('/proc/self/ns/user');
    for (let i = 0; ; i++) {
      const ns = nsOf(pid);
      if (ns !== own && ns !== also && ns !== '') break;
      if (i >= ATTEMPTS) throw new Error('unshare --user did not make a user namespace in time');
      await Promise.race([delay(INTERVAL_MS), failed]);
    }
    await Promise.race([map(pid), failed]);
    return openSync(`/proc/${pid}/ns/user`, 'r');
  } finally {
    holder.stdin!.end();
  }
}

function nsOf(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/ns/user`);
  } catch {
    return '';
  }
}
