import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdir, rmdir } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { CgroupController, ResourceLimits } from './cgroup-limits.js';
import { controllersFor } from './cgroup-limits.js';

/** One container's cgroups: the `cgroup.procs` files its first process joins, and what they count. */
export interface ContainerCgroup {
  /** `cgroup.procs` of each controller's group, written with the launcher's pid before bwrap starts. */
  readonly procs: string[];
  /** Each controller's group directory (the container's read-only view of its limits, cgroup-view.ts). */
  readonly dirs: Readonly<Partial<Record<CgroupController, string>>>;
  /** Every process in the container's groups now (`cgroup.procs` of its first group), setsid or not. */
  pids(): number[];
  /** Bytes of memory the container uses now (`memory.usage_in_bytes`), when it has a memory group. */
  memoryUsage(): number | undefined;
  /** Whether the kernel's OOM killer killed a process of the container (`memory.oom_control`). */
  oomKilled(): boolean;
  /**
   * Removes the groups once they are empty. The last tasks of a killed container can still be
   * leaving the group when its exit is seen (rmdir answers EBUSY), so it retries for a while.
   */
  remove(): Promise<void>;
}

/** How long a container's groups are waited for to empty after its exit: 50 × 20 ms. */
const REMOVE_ATTEMPTS = 50;
const REMOVE_INTERVAL_MS = 20;

/**
 * The cgroup v1 controllers this server may manage: for each of memory, cpu and pids, a
 * `dockgate` group made under the server's own group of that controller (so limits nest inside
 * whatever limits the server itself runs under). Containers get one group each below it.
 *
 * cgroup v2 (a unified hierarchy with the controllers) sets no limit here (a rootless server
 * reports what systemd delegates there, cgroup-v2.ts): its "no internal
 * processes" rule means delegating a subtree to a server that itself lives in the group, which
 * belongs to the service manager's set-up; on such a host the limits are refused, naming the field.
 */
export class Cgroups {
  private constructor(
    private readonly bases: ReadonlyMap<CgroupController, string>,
    private readonly refused: ReadonlyMap<CgroupController, string> = new Map(),
  ) {}

  /**
   * Finds the writable v1 controller hierarchies from /proc/self/mountinfo and /proc/self/cgroup.
   * Controllers that are not mounted, or whose group this process cannot create children in, are
   * left out (limits needing them are refused at create).
   */
  static detect(procRoot = '/proc/self'): Cgroups {
    const bases = new Map<CgroupController, string>();
    const refused = new Map<CgroupController, string>();
    for (const [controller, base] of Cgroups.groups(procRoot)) {
      try {
        mkdirSync(base, { recursive: true });
        // Made earlier by root, it exists but is not this (non-root) server's unless delegated to it.
        accessSync(base, constants.W_OK | constants.X_OK);
        // A new v1 cpuset group starts with no CPUs and no memory nodes: it takes its parent's.
        if (controller === 'cpuset') inheritCpuset(base);
        bases.set(controller, base);
      } catch {
        // Not ours to manage (read-only cgroupfs, no privilege): limits needing it are refused.
        refused.set(controller, base);
      }
    }
    return new Cgroups(bases, refused);
  }

  /**
   * The `dockgate` group of each mounted v1 controller, under the process's own group (from
   * /proc/self/mountinfo and /proc/self/cgroup), without making or checking anything: where a
   * server's groups are, or would be (what `dockgate rootless-cgroups` hands over).
   */
  static groups(procRoot = '/proc/self'): Map<CgroupController, string> {
    const out = new Map<CgroupController, string>();
    let mountinfo: string;
    let own: string;
    try {
      mountinfo = readFileSync(join(procRoot, 'mountinfo'), 'utf8');
      own = readFileSync(join(procRoot, 'cgroup'), 'utf8');
    } catch {
      return out;
    }
    for (const controller of ['memory', 'cpu', 'cpuset', 'pids'] as const) {
      const mount = v1Mount(mountinfo, controller);
      const path = v1OwnPath(own, controller);
      if (!mount || path === undefined) continue;
      const relative = mount.root === '/' ? path : path.startsWith(mount.root) ? path.slice(mount.root.length) : undefined;
      if (relative === undefined) continue;
      out.set(controller, join(mount.point, relative, 'dockgate'));
    }
    return out;
  }

  /** The controllers this server can set limits with. */
  get controllers(): CgroupController[] {
    return [...this.bases.keys()];
  }

  /**
   * The group a controller's limits would need handed to this server (made and given to its
   * user by an administrator: cgroup v1 delegation), when it is mounted but not writable here.
   */
  undelegated(controller: CgroupController): string | undefined {
    return this.refused.get(controller);
  }

  /** The CPUs and memory nodes containers may be given (`cpuset.cpus`/`cpuset.mems` of the server's group), when cpusets are manageable. */
  get cpusetAvailable(): { cpus?: string; mems?: string } {
    const base = this.bases.get('cpuset');
    if (!base) return {};
    const read = (file: string): string | undefined => {
      try {
        return readFileSync(join(base, file), 'utf8').trim() || undefined;
      } catch {
        return undefined;
      }
    };
    const cpus = read('cpuset.cpus');
    const mems = read('cpuset.mems');
    return { ...(cpus ? { cpus } : {}), ...(mems ? { mems } : {}) };
  }

  /** Whether a memory limit also bounds swap (the kernel's swap accounting, `memory.memsw.*`, is on). */
  get swapAccounting(): boolean {
    const memory = this.bases.get('memory');
    return memory !== undefined && existsSync(join(memory, 'memory.memsw.limit_in_bytes'));
  }

  /**
   * {@link create}, with the groups' directories made off the event loop first: a cgroup's mkdir
   * (and rmdir) waits for the kernel's cgroup lock, which every container start and exit on the
   * host takes (runc's too), so on a busy host each held the server's only thread for
   * milliseconds. The limits are then written as {@link create} writes them.
   */
  async make(id: string, limits: ResourceLimits): Promise<ContainerCgroup> {
    const bases = controllersFor(limits).map((controller) => this.bases.get(controller));
    // A controller this server cannot manage: create() refuses it, having made nothing.
    if (bases.every((base): base is string => base !== undefined)) {
      const made = await Promise.allSettled(bases.map((base) => mkdir(join(base, id), { recursive: true })));
      const failed = made.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) {
        await Promise.all(bases.map((base) => rmdir(join(base, id)).catch(() => undefined)));
        throw failed.reason;
      }
    }
    return this.create(id, limits);
  }

  /** Creates the groups of one container and writes its limits; throws when the kernel refuses one. */
  create(id: string, limits: ResourceLimits): ContainerCgroup {
    const dirs = new Map<CgroupController, string>();
    const removeNow = (): void => {
      for (const dir of dirs.values()) {
        try {
          rmdirSync(dir);
        } catch {
          // Still busy (a process lingers) or already gone: nothing more to do.
        }
      }
    };
    const remove = async (): Promise<void> => {
      for (let attempt = 0; attempt < REMOVE_ATTEMPTS; attempt++) {
        // Off the event loop, as in make().
        await Promise.all([...dirs.values()].map((dir) => rmdir(dir).catch(() => undefined)));
        if (![...dirs.values()].some((dir) => existsSync(dir))) return;
        await delay(REMOVE_INTERVAL_MS);
      }
    };
    try {
      for (const controller of controllersFor(limits)) {
        const base = this.bases.get(controller);
        if (!base) throw new Error(`the ${controller} cgroup is not manageable on this server`);
        const dir = join(base, id);
        mkdirSync(dir, { recursive: true });
        dirs.set(controller, dir);
      }
      const memory = dirs.get('memory');
      if (memory && limits.memory !== undefined) {
        const memoryFile = join(memory, 'memory.limit_in_bytes');
        const memsw = join(memory, 'memory.memsw.limit_in_bytes');
        // Swap accounting is off on many kernels (no memsw files): the memory limit still holds.
        const swap = limits.memorySwap !== undefined && existsSync(memsw) ? String(limits.memorySwap) : undefined;
        try {
          writeFileSync(memoryFile, String(limits.memory));
          if (swap !== undefined) writeFileSync(memsw, swap);
        } catch (error) {
          // The kernel keeps memory <= memory+swap at every step: raising both (`docker update`)
          // must write the swap limit first.
          if (swap === undefined) throw error;
          writeFileSync(memsw, swap);
          writeFileSync(memoryFile, String(limits.memory));
        }
      }
      const cpu = dirs.get('cpu');
      if (cpu && limits.cpu) {
        writeFileSync(join(cpu, 'cpu.cfs_period_us'), String(limits.cpu.period));
        writeFileSync(join(cpu, 'cpu.cfs_quota_us'), String(limits.cpu.quota));
      }
      if (cpu && limits.cpuShares !== undefined) writeFileSync(join(cpu, 'cpu.shares'), String(limits.cpuShares));
      const pids = dirs.get('pids');
      if (pids && limits.pids !== undefined) writeFileSync(join(pids, 'pids.max'), String(limits.pids));
      if (memory && limits.swappiness !== undefined) writeFileSync(join(memory, 'memory.swappiness'), String(limits.swappiness));
      const cpuset = dirs.get('cpuset');
      if (cpuset) {
        // Both files must hold something before a task may join; an unset one is the parent's.
        inheritCpuset(cpuset);
        if (limits.cpuset?.cpus !== undefined) writeFileSync(join(cpuset, 'cpuset.cpus'), limits.cpuset.cpus);
        if (limits.cpuset?.mems !== undefined) writeFileSync(join(cpuset, 'cpuset.mems'), limits.cpuset.mems);
      }
    } catch (error) {
      removeNow();
      throw error;
    }
    const memoryDir = dirs.get('memory');
    const procs = [...dirs.values()].map((dir) => join(dir, 'cgroup.procs'));
    return {
      procs,
      dirs: Object.fromEntries(dirs),
      pids: () => {
        try {
          return readFileSync(procs[0] ?? '', 'utf8').split('\n').filter(Boolean).map(Number);
        } catch {
          return [];
        }
      },
      memoryUsage: () => (memoryDir ? readNumber(join(memoryDir, 'memory.usage_in_bytes')) : undefined),
      oomKilled: () => {
        if (!memoryDir) return false;
        try {
          const match = /^oom_kill (\d+)$/m.exec(readFileSync(join(memoryDir, 'memory.oom_control'), 'utf8'));
          return match !== null && Number(match[1]) > 0;
        } catch {
          return false;
        }
      },
      remove,
    };
  }
}

/** Copies the parent group's `cpuset.cpus` and `cpuset.mems` into an empty cpuset group. */
function inheritCpuset(dir: string): void {
  for (const file of ['cpuset.cpus', 'cpuset.mems']) {
    const own = join(dir, file);
    if (readFileSync(own, 'utf8').trim() !== '') continue;
    writeFileSync(own, readFileSync(join(dir, '..', file), 'utf8').trim());
  }
}

function readNumber(file: string): number | undefined {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The mount point and root of the v1 hierarchy holding `controller` (mountinfo: proc(5)). */
function v1Mount(mountinfo: string, controller: string): { point: string; root: string } | undefined {
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const [fstype, , superOptions = ''] = right.split(' ');
    if (fstype !== 'cgroup' || !superOptions.split(',').includes(controller)) continue;
    const fields = left.split(' ');
    const root = unescapeMountField(fields[3] ?? '');
    const point = unescapeMountField(fields[4] ?? '');
    if (point) return { point, root };
  }
  return undefined;
}

/** This process's group path in the v1 hierarchy of `controller` (/proc/self/cgroup: `N:ctrl,…:path`). */
function v1OwnPath(own: string, controller: string): string | undefined {
  for (const line of own.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    if (line.slice(first + 1, second).split(',').includes(controller)) return line.slice(second + 1);
  }
  return undefined;
}

/** mountinfo escapes space, tab, newline and backslash as octal (`\040`). */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_m, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}
