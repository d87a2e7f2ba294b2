import { readFileSync, readdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import type { NetworkCounters } from './net-dev.js';

// Process facts read from Linux /proc, for pause, top and stats of containers whose processes are
// host processes (process and sandbox runtimes).

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on every Linux ABI Node runs on). */
const USER_HZ = 100;
const PAGE_SIZE = 4096;

interface ProcStat { pid: number; ppid: number; utime: number; stime: number; rssPages: number }

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(rest[1]), utime: Number(rest[11]), stime: Number(rest[12]), rssPages: Number(rest[21]) };
  } catch {
    return undefined;
  }
}

/**
 * Every descendant of `root` (not `root` itself), found through the parent pids of /proc.
 *
 * @example
 * descendants(process.pid); // pids of this process's children, grandchildren…
 */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = readStat(Number(name));
    if (!st) continue;
    const list = children.get(st.ppid) ?? [];
    list.push(st.pid);
    children.set(st.ppid, list);
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** One stats sample of a set of processes, in the units of dockerd's StatsJSON. */
export interface ProcSample {
  read: Date;
  /** CPU time of the processes, nanoseconds: total, kernel, user. */
  total: number;
  kernel: number;
  user: number;
  /** All CPUs' time since boot (the /proc/stat `cpu` line), nanoseconds. */
  system: number;
  memory: number;
  pids: number;
  /** The container's own network interfaces (net-dev.ts), when it has a network namespace of its own. */
  networks?: Record<string, NetworkCounters>;
}

export function sampleProcesses(pids: readonly number[]): ProcSample {
  let user = 0;
  let kernel = 0;
  let rss = 0;
  let alive = 0;
  for (const pid of pids) {
    const st = readStat(pid);
    if (!st) continue;
    alive += 1;
    user += st.utime;
    kernel += st.stime;
    rss += st.rssPages * PAGE_SIZE;
  }
  const ns = 1e9 / USER_HZ;
  return { read: new Date(), total: (user + kernel) * ns, kernel: kernel * ns, user: user * ns, system: systemCpu(), memory: rss, pids: alive };
}

function systemCpu(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1, 9).reduce((sum, v) => sum + Number(v), 0);
    return ticks * (1e9 / USER_HZ);
  } catch {
    return 0;
  }
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

function cpuStats(s: ProcSample | undefined): Record<string, unknown> {
  return {
    cpu_usage: { total_usage: s?.total ?? 0, usage_in_kernelmode: s?.kernel ?? 0, usage_in_usermode: s?.user ?? 0 },
    ...(s ? { system_cpu_usage: s.system, online_cpus: cpus().length } : {}),
    throttling_data: { periods: 0, throttled_periods: 0, throttled_time: 0 },
  };
}

/**
 * dockerd's StatsJSON (cgroup v2 shape) from two samples; `previous` undefined gives the zero
 * `precpu_stats` of a one-shot answer, `current` undefined the all-zero answer of a stopped container.
 */
export function statsJson(name: string, id: string, current: ProcSample | undefined, previous: ProcSample | undefined, memoryLimit = totalmem()): Record<string, unknown> {
  return {
    read: current?.read.toISOString() ?? ZERO_TIME,
    preread: previous?.read.toISOString() ?? ZERO_TIME,
    pids_stats: current ? { current: current.pids } : {},
    blkio_stats: {
      io_service_bytes_recursive: null, io_serviced_recursive: null, io_queue_recursive: null, io_service_time_recursive: null,
      io_wait_time_recursive: null, io_merged_recursive: null, io_time_recursive: null, sectors_recursive: null,
    },
    num_procs: 0,
    storage_stats: {},
    cpu_stats: cpuStats(current),
    precpu_stats: cpuStats(previous),
    memory_stats: current ? { usage: current.memory, stats: {}, limit: memoryLimit } : {},
    name: `/${name}`,
    id,
    // dockerd gives `networks` for a container with a network of its own, after `id`.
    ...(current?.networks ? { networks: current.networks } : {}),
  };
}
