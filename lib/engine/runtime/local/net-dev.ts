import { readFileSync, readlinkSync } from 'node:fs';

/** One interface's counters as dockerd's stats give them (`networks.<name>`), in Go's field order. */
export interface NetworkCounters {
  rx_bytes: number;
  rx_packets: number;
  rx_errors: number;
  rx_dropped: number;
  tx_bytes: number;
  tx_packets: number;
  tx_errors: number;
  tx_dropped: number;
}

/**
 * The counters of every interface but `lo` in /proc/net/dev text (dockerd leaves the loopback
 * out too). Each line: `name: rx bytes packets errs drop fifo frame compressed multicast`, then
 * tx `bytes packets errs drop fifo colls carrier compressed`.
 *
 * @example
 * parseNetDev('  eth0: 90 1 0 0 0 0 0 0 70 1 0 0 0 0 0 0\n').eth0?.rx_bytes; // 90
 */
export function parseNetDev(text: string): Record<string, NetworkCounters> {
  const out: Record<string, NetworkCounters> = {};
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (name === '' || name === 'lo' || name.includes('|') || f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    out[name] = {
      rx_bytes: f[0]!, rx_packets: f[1]!, rx_errors: f[2]!, rx_dropped: f[3]!,
      tx_bytes: f[8]!, tx_packets: f[9]!, tx_errors: f[10]!, tx_dropped: f[11]!,
    };
  }
  return out;
}

/**
 * The interfaces' counters of the network namespace of the first of `pids` that is not in the
 * server's own (the container's pid 1, bwrap's child; the launcher above it stays in the
 * host's). Undefined when none is: a container on the host's network has no counters of its own,
 * and dockerd gives none for `--network host` either.
 */
export function containerNetworks(pids: readonly number[]): Record<string, NetworkCounters> | undefined {
  const own = netns('self');
  for (const pid of pids) {
    const ns = netns(String(pid));
    if (ns === undefined || ns === own) continue;
    try {
      return parseNetDev(readFileSync(`/proc/${pid}/net/dev`, 'utf8'));
    } catch {
      // Gone meanwhile: the next one.
    }
  }
  return undefined;
}

function netns(pid: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}
