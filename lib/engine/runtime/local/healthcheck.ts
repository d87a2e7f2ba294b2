import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalContainer, LocalExecProcess, LocalExecRun } from './local-container.js';

export type { HealthConfig, HealthLogEntry, HealthState, HealthStatus } from './health-types.js';
import type { HealthConfig, HealthLogEntry, HealthState, HealthStatus } from './health-types.js';

// dockerd's constants (daemon/health.go): defaults for a zero field, the output kept, the log kept.
const DEFAULT_INTERVAL_NS = 30e9;
const DEFAULT_TIMEOUT_NS = 30e9;
const DEFAULT_RETRIES = 3;
const MAX_OUTPUT = 4096;
const MAX_LOG_ENTRIES = 5;
/** api/types/container MinimumDuration: 1ms. */
const MINIMUM_NS = 1e6;

/** The `health` values `GET /containers/json` accepts (`none`: no healthcheck). */
export const HEALTH_FILTER_VALUES = ['starting', 'healthy', 'unhealthy', 'none'] as const;

/**
 * The healthcheck a container runs: the body's, with the image's filling what the body leaves
 * at zero, as dockerd merges them (runconfig merge: a missing Healthcheck takes the image's whole;
 * an empty Test, and each zero duration or retry count, take the image's).
 */
export function mergeHealthcheck(own: HealthConfig | null | undefined, fromImage: HealthConfig | undefined): HealthConfig | undefined {
  if (own === undefined || own === null) return fromImage ? { ...fromImage } : undefined;
  if (!fromImage) return own;
  return {
    ...own,
    Test: own.Test && own.Test.length > 0 ? own.Test : fromImage.Test ?? null,
    Interval: own.Interval || fromImage.Interval || 0,
    Timeout: own.Timeout || fromImage.Timeout || 0,
    StartPeriod: own.StartPeriod || fromImage.StartPeriod || 0,
    Retries: own.Retries || fromImage.Retries || 0,
  };
}

/**
 * Refuses a healthcheck dockerd refuses, with its messages (daemon/container.go), and a Test
 * kind dockerd would keep but never run (it only logs "Unknown healthcheck type"): here that
 * is refused, naming it, rather than silently never probed.
 */
export function validateHealthcheck(hc: unknown): void {
  if (hc === undefined || hc === null) return;
  if (typeof hc !== 'object' || Array.isArray(hc)) throw EngineError.invalidParameter('Healthcheck must be an object');
  const h = hc as Record<string, unknown>;
  for (const field of ['Interval', 'Timeout', 'StartPeriod', 'Retries']) {
    if (h[field] !== undefined && h[field] !== null && !Number.isInteger(h[field])) throw EngineError.invalidParameter(`Healthcheck.${field} must be an integer`);
  }
  for (const field of ['Interval', 'Timeout', 'StartPeriod']) {
    const v = (h[field] as number | undefined) ?? 0;
    if (v !== 0 && v < MINIMUM_NS) throw EngineError.invalidParameter(`${field} in Healthcheck cannot be less than 1ms`);
  }
  if (((h.Retries as number | undefined) ?? 0) < 0) throw EngineError.invalidParameter('Retries in Healthcheck cannot be negative');
  const test = h.Test;
  if (test === undefined || test === null) return;
  if (!Array.isArray(test) || !test.every((t) => typeof t === 'string')) throw EngineError.invalidParameter('Healthcheck.Test must be a list of strings');
  if (test.length === 0) return;
  const [kind] = test as string[];
  if (kind !== 'CMD' && kind !== 'CMD-SHELL' && kind !== 'NONE') {
    throw EngineError.invalidParameter(`Healthcheck.Test: unknown healthcheck type '${String(kind)}' (expected CMD, CMD-SHELL or NONE)`);
  }
  if (kind !== 'NONE' && test.length < 2) throw EngineError.invalidParameter(`Healthcheck.Test: ${kind} needs a command`);
}

/** The command a healthcheck runs, or undefined when it runs none (no Test, or `NONE`). */
export function probeArgv(hc: HealthConfig | undefined): string[] | undefined {
  const test = hc?.Test;
  if (!test || test.length === 0) return undefined;
  const [kind, ...rest] = test;
  if (kind === 'CMD') return rest;
  // dockerd runs CMD-SHELL with the container's shell, /bin/sh -c by default.
  if (kind === 'CMD-SHELL') return ['/bin/sh', '-c', rest.join(' ')];
  return undefined;
}

/** The `docker ps` status suffix dockerd gives a running container's health (container/health.go). */
export function healthSuffix(health: HealthState | undefined): string {
  if (!health) return '';
  return health.Status === 'starting' ? ' (health: starting)' : ` (${health.Status})`;
}

/** A Go `time.Duration` string (`30s`, `1m30s`, `500ms`), as dockerd prints a timeout. */
export function goDuration(ns: number): string {
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${trim(ns / 1e3)}µs`;
  if (ns < 1e9) return `${trim(ns / 1e6)}ms`;
  const h = Math.floor(ns / 3600e9);
  const m = Math.floor((ns % 3600e9) / 60e9);
  const s = (ns % 60e9) / 1e9;
  return `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${trim(s)}s`;
}

function trim(n: number): string {
  return String(Number(n.toFixed(9)));
}

/** Runs a probe command inside the container (the executor's exec path, confined as a `docker exec` is). */
export type ProbeExec = (run: LocalExecRun) => Promise<LocalExecProcess>;

/**
 * The health monitor of one running container, as dockerd's (daemon/health.go): the first
 * probe one interval after start, then one interval after each probe ends; a probe past its
 * timeout is killed and counts as a failure (ExitCode -1). A success makes the container
 * healthy and resets the streak; a failure inside the start period of a container never yet
 * healthy does not count; `Retries` failures in a row make it unhealthy. Each status change is
 * reported (dockerd's `health_status: <status>` event).
 */
export class HealthMonitor {
  private timer: NodeJS.Timeout | undefined;
  private probe: LocalExecProcess | undefined;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly timeoutNs: number;
  private readonly startPeriodMs: number;
  private readonly retries: number;

  constructor(
    private readonly c: LocalContainer,
    private readonly argv: string[],
    config: HealthConfig,
    private readonly exec: ProbeExec,
    private readonly changed: (status: HealthStatus) => void,
  ) {
    this.intervalMs = (config.Interval || DEFAULT_INTERVAL_NS) / 1e6;
    this.timeoutNs = config.Timeout || DEFAULT_TIMEOUT_NS;
    this.startPeriodMs = (config.StartPeriod || 0) / 1e6;
    this.retries = config.Retries && config.Retries > 0 ? config.Retries : DEFAULT_RETRIES;
    // A restart begins again at `starting` with a clean streak; the log of earlier runs stays (as dockerd's).
    const log = c.health?.Log ?? [];
    c.health = { Status: 'starting', FailingStreak: 0, Log: log };
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.probe?.kill('SIGKILL');
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.runOnce(), Math.min(this.intervalMs, 2 ** 31 - 1));
    this.timer.unref();
  }

  private async runOnce(): Promise<void> {
    const start = new Date();
    const entry = await this.runProbe();
    if (this.stopped) return;
    this.record({ Start: start.toISOString(), End: new Date().toISOString(), ...entry }, start);
    this.schedule();
  }

  private async runProbe(): Promise<{ ExitCode: number; Output: string }> {
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let proc: LocalExecProcess;
    try {
      proc = await this.exec({
        container: this.c,
        argv: this.argv,
        env: this.c.env,
        user: '',
        workingDir: '',
        tty: false,
        stdin: false,
        privileged: false,
        output: (_stream, data) => {
          const room = MAX_OUTPUT - kept;
          if (data.length > room) truncated = true;
          if (room <= 0) return;
          const part = data.subarray(0, room);
          chunks.push(part);
          kept += part.length;
        },
      });
    } catch (error) {
      return { ExitCode: -1, Output: (error as Error).message };
    }
    this.probe = proc;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.min(this.timeoutNs / 1e6, 2 ** 31 - 1));
    });
    const code = await Promise.race([proc.exited, timedOut]);
    clearTimeout(timer);
    this.probe = undefined;
    if (code === 'timeout') {
      proc.kill('SIGKILL');
      return { ExitCode: -1, Output: `Health check exceeded timeout (${goDuration(this.timeoutNs)})` };
    }
    return { ExitCode: code, Output: Buffer.concat(chunks).toString('utf8') + (truncated ? '...' : '') };
  }

  private record(entry: HealthLogEntry, start: Date): void {
    const h = this.c.health!;
    const before = h.Status;
    h.Log = [...h.Log, entry].slice(-MAX_LOG_ENTRIES);
    if (entry.ExitCode === 0) {
      h.FailingStreak = 0;
      h.Status = 'healthy';
    } else {
      const sinceStart = start.getTime() - (this.c.startedAt?.getTime() ?? 0);
      if (!(before === 'starting' && sinceStart < this.startPeriodMs)) {
        h.FailingStreak += 1;
        if (h.FailingStreak >= this.retries) h.Status = 'unhealthy';
      }
    }
    if (h.Status !== before) this.changed(h.Status);
  }
}
