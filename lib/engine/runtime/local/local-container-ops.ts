import { withHostConfig } from '../../../engine-api/container-spec.js';
import { execFile } from 'node:child_process';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type { RemoveOptions, StopOptions } from '../../../engine-api/runtime-types.js';
import type {
  ContainerPruneReport, RestartOptions, StatsOptions, TopResult,
} from '../../../engine-api/container-operations.js';
import type { LocalContainer } from './local-container.js';
import { labelMatches } from './label-filter.js';
import { sampleProcesses, statsJson, type ProcSample } from './proc-stats.js';
import { containerNetworks } from './net-dev.js';
import { parseUntil } from './until-filter.js';
import { restarts, restartPolicyOf, validateRestartPolicy } from './restart-supervisor.js';

/** What the operations need from the runtime that owns the containers. */
export interface LocalOpsHost {
  readonly name: string;
  resolve(ref: string): LocalContainer;
  rename(c: LocalContainer, name: string): void;
  /** Keeps a changed container's record (its HostConfig after an update) across restarts. */
  saved(c: LocalContainer): void;
  all(): LocalContainer[];
  publish(action: string, c: LocalContainer, extra?: Record<string, string>): void;
  start(ref: string): Promise<void>;
  stop(ref: string, options: StopOptions): Promise<void>;
  remove(ref: string, options: RemoveOptions): Promise<void>;
}

/** Seconds between streamed stats objects (dockerd's collector interval). */
const STATS_INTERVAL_MS = 1000;

/**
 * restart, rename, pause/unpause, top, stats, prune and update for local containers. Pause
 * sends SIGSTOP to every process of the container (SIGCONT to thaw), the way the cgroup freezer
 * stops them for dockerd; top runs the host's `ps` and keeps the container's rows, as dockerd does.
 */
export class LocalContainerOps {
  constructor(
    private readonly host: LocalOpsHost,
    /** Bytes a container has written (its SizeRw), when the executor can tell. */
    private readonly sizeRw?: (c: LocalContainer) => Promise<number>,
  ) {}

  async restart(ref: string, { timeout, signal }: RestartOptions): Promise<void> {
    const c = this.host.resolve(ref);
    if (c.status === 'running') {
      if (c.paused) this.freeze(c, false);
      await this.host.stop(c.id, { ...(timeout === undefined ? {} : { timeout }), ...(signal ? { signal } : {}) });
    }
    await this.host.start(c.id);
    this.host.publish('restart', c);
  }

  async rename(ref: string, name: string): Promise<void> {
    const c = this.host.resolve(ref);
    const old = c.name;
    if (old === name) throw EngineError.invalidParameter('Renaming a container with the same name as its current name');
    this.host.rename(c, name);
    this.host.publish('rename', c, { oldName: `/${old}` });
  }

  async pause(ref: string): Promise<void> {
    const c = this.host.resolve(ref);
    if (c.status !== 'running') throw EngineError.conflict(`Container ${c.id} is not running`);
    if (c.paused) throw EngineError.conflict(`Container ${c.id} is already paused`);
    this.freeze(c, true);
    // A paused container that is killed or stops is no longer paused.
    c.exitWaiters.add(() => {
      c.paused = false;
    });
    this.host.publish('pause', c);
  }

  async unpause(ref: string): Promise<void> {
    const c = this.host.resolve(ref);
    if (c.status !== 'running' || !c.paused) throw EngineError.conflict(`Container ${c.id} is not paused`);
    this.freeze(c, false);
    this.host.publish('unpause', c);
  }

  private freeze(c: LocalContainer, on: boolean): void {
    const signal = on ? 'SIGSTOP' : 'SIGCONT';
    for (const pid of c.process?.pids?.() ?? []) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone meanwhile
      }
    }
    c.paused = on;
  }

  async top(ref: string, psArgs: string): Promise<TopResult> {
    const c = this.host.resolve(ref);
    if (c.status !== 'running' || !c.process) throw EngineError.conflict(`Container ${c.id} is not running`);
    const pids = c.process.pids?.();
    if (!pids) {
      // A scripted container is no host process: it shows as the one process it stands for.
      return { Titles: ['UID', 'PID', 'PPID', 'C', 'STIME', 'TTY', 'TIME', 'CMD'], Processes: [['root', String(c.pid), '0', '0', '00:00', '?', '00:00:00', c.argv.join(' ')]] };
    }
    const args = psArgs.split(' ').filter((a) => a !== '');
    const output = await new Promise<string>((resolve, reject) => {
      execFile('ps', args, { timeout: 10_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(EngineError.invalidParameter(`Error running ps: ${(stderr || error.message).trim()}`));
        else resolve(stdout);
      });
    });
    return parsePs(output, new Set(pids));
  }

  async stats(ref: string, { stream, oneShot, signal }: StatsOptions): Promise<Readable> {
    const c = this.host.resolve(ref);
    const sample = (): ProcSample | undefined => {
      if (c.status !== 'running' || !c.process) return undefined;
      const pids = c.process.pids?.();
      const s = pids ? sampleProcesses(pids) : { read: new Date(), total: 0, kernel: 0, user: 0, system: 0, memory: 0, pids: 1 };
      // A container with a memory cgroup is measured as dockerd measures it: the group's usage.
      const grouped = c.process.memoryUsage?.();
      // One with a network of its own: its interfaces' counters, read in its namespace (net-dev.ts).
      const networks = c.process.network && pids ? containerNetworks(pids) : undefined;
      return { ...s, ...(grouped !== undefined ? { memory: grouped } : {}), ...(networks ? { networks } : {}) };
    };
    const memory = c.spec.host.memory;
    const limit = memory !== undefined && memory > 0 ? memory : undefined;
    const line = (cur: ProcSample | undefined, prev: ProcSample | undefined): Buffer => Buffer.from(`${JSON.stringify(statsJson(c.name, c.id, cur, prev, limit))}\n`);
    const first = sample();
    if (!stream) {
      // Without one-shot dockerd waits for a second sample, so `precpu_stats` gives the CPU % a base.
      if (oneShot || !first) return Readable.from([line(first, undefined)]);
      await delay(STATS_INTERVAL_MS, undefined, { signal }).catch(() => undefined);
      return Readable.from([line(sample(), first)]);
    }
    async function* lines(): AsyncGenerator<Buffer> {
      let previous: ProcSample | undefined;
      let current = first;
      for (;;) {
        yield line(current, previous);
        if (!current || signal.aborted) return;
        const ok = await delay(STATS_INTERVAL_MS, true, { signal }).catch(() => false);
        if (!ok) return;
        previous = current;
        current = sample();
      }
    }
    return Readable.from(lines());
  }

  async prune(filters: EngineFilters): Promise<ContainerPruneReport> {
    const until = filters.get('until');
    const cutoff = until && until.size > 0 ? Math.min(...[...until].map((u) => parseUntil(u))) : undefined;
    const labels = [...(filters.get('label') ?? [])];
    const notLabels = [...(filters.get('label!') ?? [])];
    const deleted: string[] = [];
    let reclaimed = 0;
    for (const c of this.host.all()) {
      if (c.status === 'running' || c.status === 'removing') continue;
      if (cutoff !== undefined && c.created.getTime() >= cutoff) continue;
      if (!labels.every((l) => labelMatches(c.labels, l))) continue;
      if (notLabels.some((l) => labelMatches(c.labels, l))) continue;
      // Measured before the removal takes the files (dockerd sums the removed layers' sizes).
      const size = this.sizeRw ? await this.sizeRw(c).catch(() => 0) : 0;
      await this.host.remove(c.id, { force: false, volumes: false });
      deleted.push(c.id);
      reclaimed += size;
    }
    return { ContainersDeleted: deleted.length > 0 ? deleted : null, SpaceReclaimed: reclaimed };
  }

  /**
   * `docker rm --link PARENT/ALIAS`: the HostConfig.Links entry of that alias goes (null when it
   * was the last, as dockerd shows it), and the executor forgets the link. None of that alias is
   * dockerd's 404 naming the link's path.
   */
  async removeLink(ref: string, alias: string, unlinked: (id: string, alias: string) => void): Promise<void> {
    const missing = EngineError.notFound(`No such container: ${ref}/${alias}`);
    const c = (() => {
      try {
        return this.host.resolve(ref);
      } catch (error) {
        throw error instanceof EngineError && error.kind === 'NotFound' ? missing : error;
      }
    })();
    const aliasOf = (entry: string) => entry.split(':')[1] ?? entry.split(':')[0]!.replace(/^\//, '');
    const links = c.spec.host.links;
    if (!links.some((e) => aliasOf(e) === alias)) throw missing;
    const kept = links.filter((e) => aliasOf(e) !== alias);
    unlinked(c.id, alias);
    c.spec = withHostConfig(c.spec, { Links: kept.length > 0 ? kept : null });
    c.body = c.spec.raw;
    this.host.saved(c);
  }

  /**
   * The set fields go to the executor's `update` (the sandbox rewrites the container's cgroups);
   * without one, or for fields it cannot honor, they are refused, naming them. RestartPolicy is
   * checked as dockerd checks it and kept for the restart supervisor. What was applied is kept in the container's HostConfig, so inspect
   * shows it and the next start uses it.
   */
  async update(ref: string, body: Record<string, unknown>, apply?: (c: LocalContainer, update: Record<string, unknown>) => Promise<Record<string, unknown>>): Promise<{ Warnings: string[] | null }> {
    const c = this.host.resolve(ref);
    const { RestartPolicy: policy, ...set } = Object.fromEntries(Object.entries(body).filter(([, v]) => isSet(v)));
    // The restart policy is the supervisor's (restart-supervisor.ts), not the executor's: kept here, read at the next exit.
    if (policy !== undefined) {
      validateRestartPolicy(policy);
      if (c.autoRemove && restarts(restartPolicyOf({ RestartPolicy: policy }))) {
        throw EngineError.conflict(`Cannot update container ${c.id}: Restart policy cannot be updated because AutoRemove is enabled for the container`);
      }
    }
    if (Object.keys(set).length === 0) {
      if (policy === undefined) return { Warnings: null };
      c.spec = withHostConfig(c.spec, { RestartPolicy: policy });
      c.body = c.spec.raw;
      this.host.saved(c);
      this.host.publish('update', c);
      return { Warnings: null };
    }
    if (!apply) throw EngineError.invalidParameter(`${Object.keys(set).join(', ')}: updating containers is not supported by the ${this.host.name} runtime`);
    const applied = await apply(c, set);
    c.spec = withHostConfig(c.spec, { ...applied, ...(policy !== undefined ? { RestartPolicy: policy } : {}) });
    c.body = c.spec.raw;
    this.host.saved(c);
    this.host.publish('update', c);
    return { Warnings: null };
  }
}

/** The zero values the Docker CLI sends for every update field it was not asked to change. */
function isSet(v: unknown): boolean {
  if (v === undefined || v === null || v === 0 || v === '' || v === false) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.values(v as Record<string, unknown>).some(isSet);
  return true;
}

/** dockerd's parsing of `ps` output: the PID column picks the rows, the last column keeps its spaces. */
export function parsePs(output: string, pids: ReadonlySet<number>): TopResult {
  const lines = output.split('\n').filter((l) => l.trim() !== '');
  const titles = (lines[0] ?? '').trim().split(/\s+/);
  const pidIndex = titles.indexOf('PID');
  if (pidIndex === -1) throw EngineError.invalidParameter("Couldn't find PID field in ps output");
  const processes: string[][] = [];
  for (const line of lines.slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (!pids.has(Number(fields[pidIndex]))) continue;
    processes.push([...fields.slice(0, titles.length - 1), fields.slice(titles.length - 1).join(' ')]);
  }
  return { Titles: titles, Processes: processes };
}
