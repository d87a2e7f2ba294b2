import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalContainer } from './local-container.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';

/** `HostConfig.RestartPolicy`. `''` and `no` both mean "never". */
export interface RestartPolicy {
  Name: string;
  MaximumRetryCount: number;
}

// dockerd's restartmanager: the first delay, its growth, its cap, and the run that resets it.
const FIRST_DELAY_MS = 100;
const MAX_DELAY_MS = 60_000;
const RESET_AFTER_RUN_MS = 10_000;

/** The container's restart policy as inspect shows it (`{Name: '', MaximumRetryCount: 0}` when none). */
export function restartPolicyOf(hostConfig: Record<string, unknown> | null | undefined): RestartPolicy {
  const p = (hostConfig?.RestartPolicy ?? {}) as Partial<RestartPolicy>;
  return { Name: typeof p.Name === 'string' ? p.Name : '', MaximumRetryCount: typeof p.MaximumRetryCount === 'number' ? p.MaximumRetryCount : 0 };
}

/** A spec's restart policy in inspect's shape. */
export function specRestartPolicy(spec: ContainerSpec): RestartPolicy {
  return { Name: spec.host.restartPolicy.name, MaximumRetryCount: spec.host.restartPolicy.maximumRetryCount };
}

/** Refuses a restart policy dockerd refuses, with its messages (daemon/container.go verifyContainerSettings). */
export function validateRestartPolicy(value: unknown): void {
  if (value === undefined || value === null) return;
  if (typeof value !== 'object' || Array.isArray(value)) throw EngineError.invalidParameter('RestartPolicy must be an object');
  const { Name = '', MaximumRetryCount = 0 } = value as Record<string, unknown>;
  if (typeof Name !== 'string') throw EngineError.invalidParameter('RestartPolicy.Name must be a string');
  if (!Number.isInteger(MaximumRetryCount)) throw EngineError.invalidParameter('RestartPolicy.MaximumRetryCount must be an integer');
  switch (Name) {
    case 'always': case 'unless-stopped': case 'no':
      if (MaximumRetryCount !== 0) throw EngineError.invalidParameter(`maximum retry count cannot be used with restart policy '${Name}'`);
      return;
    case 'on-failure':
      if ((MaximumRetryCount as number) < 0) throw EngineError.invalidParameter('maximum retry count cannot be negative');
      return;
    case '':
      return;
    default:
      throw EngineError.invalidParameter(`invalid restart policy '${Name}'`);
  }
}

/** True for a policy that ever restarts. */
export function restarts(policy: RestartPolicy): boolean {
  return policy.Name !== '' && policy.Name !== 'no';
}

/** Checks a spec's RestartPolicy, and its AutoRemove, as dockerd does. */
export function validateCreatePolicy(spec: ContainerSpec): void {
  const policy = specRestartPolicy(spec);
  validateRestartPolicy(policy);
  if (spec.host.autoRemove && restarts(policy)) {
    throw EngineError.invalidParameter("can't create 'AutoRemove' container with restart policy");
  }
}

/**
 * Whether a container that exited with `exitCode` is started again (restartmanager
 * ShouldRestart): `always` yes, `unless-stopped` unless the user stopped it, `on-failure` on a
 * non-zero code while fewer than MaximumRetryCount restarts were made (0: no limit).
 */
export function shouldRestart(policy: RestartPolicy, exitCode: number, manuallyStopped: boolean, restartCount: number): boolean {
  switch (policy.Name) {
    case 'always': return true;
    case 'unless-stopped': return !manuallyStopped;
    case 'on-failure': return exitCode !== 0 && (policy.MaximumRetryCount === 0 || restartCount < policy.MaximumRetryCount);
    default: return false;
  }
}

/**
 * The next backoff delay after a run of `ranMs`, given the last one (0 before the first):
 * 100 ms, doubled at each restart up to one minute, back to 100 ms after a run of 10 s or more.
 */
export function nextDelay(lastMs: number, ranMs: number): number {
  const last = ranMs >= RESET_AFTER_RUN_MS ? 0 : lastMs;
  return last === 0 ? FIRST_DELAY_MS : Math.min(last * 2, MAX_DELAY_MS);
}

interface Supervised {
  delayMs: number;
  timer?: NodeJS.Timeout;
  /** The user stopped or killed it: the coming exit is not restarted (dockerd's Cancel). */
  canceled: boolean;
  /** The pending start is the supervisor's own (it keeps RestartCount). */
  restarting: boolean;
}

/** What the supervisor needs from its runtime. */
export interface SupervisorHost {
  start(c: LocalContainer): Promise<void>;
  saved(c: LocalContainer): void;
}

/**
 * Restart policies for a local runtime, as dockerd's restartmanager and monitor apply them: an
 * exit the policy restarts leaves the container `restarting` for the backoff delay, then starts it
 * again (`die`, then `start`), counting RestartCount. `docker stop`, and a kill with SIGKILL or
 * the stop signal, cancel the restart of the exit they cause; a start by the user begins afresh
 * (RestartCount 0, first delay).
 */
export class RestartSupervisor {
  private readonly state = new Map<string, Supervised>();
  private closing = false;

  constructor(private readonly host: SupervisorHost) {}

  private of(c: LocalContainer): Supervised {
    let s = this.state.get(c.id);
    if (!s) {
      s = { delayMs: 0, canceled: false, restarting: false };
      this.state.set(c.id, s);
    }
    return s;
  }

  /** Called at every start: the user's resets the count and the backoff; the supervisor's keeps them. */
  starting(c: LocalContainer): void {
    const s = this.of(c);
    clearTimeout(s.timer);
    s.timer = undefined;
    s.canceled = false;
    c.restarting = false;
    if (s.restarting) {
      s.restarting = false;
      return;
    }
    s.delayMs = 0;
    c.restartCount = 0;
    c.manuallyStopped = false;
  }

  /** The user stops or kills it: its next exit stays an exit. `cancel` false only marks it stopped (another signal). */
  stoppedByUser(c: LocalContainer, cancel = true): void {
    c.manuallyStopped = true;
    if (cancel) this.of(c).canceled = true;
  }

  /** After an exit: schedules the restart the policy asks for; true when one is pending. */
  exited(c: LocalContainer, exitCode: number): boolean {
    const s = this.of(c);
    const policy = specRestartPolicy(c.spec);
    if (this.closing || s.canceled || !shouldRestart(policy, exitCode, c.manuallyStopped === true, c.restartCount ?? 0)) return false;
    const ran = (c.finishedAt?.getTime() ?? Date.now()) - (c.startedAt?.getTime() ?? 0);
    s.delayMs = nextDelay(s.delayMs, ran);
    c.restartCount = (c.restartCount ?? 0) + 1;
    c.restarting = true;
    s.restarting = true;
    s.timer = setTimeout(() => {
      s.timer = undefined;
      this.host.start(c).catch((error: unknown) => {
        // A restart that cannot start leaves the container exited, its error kept (as dockerd's SetStopped).
        s.restarting = false;
        c.restarting = false;
        c.error = (error as Error).message;
        this.host.saved(c);
      });
    }, s.delayMs);
    s.timer.unref();
    return true;
  }

  /** Ends a pending restart (stop, kill or removal of a restarting container); true when there was one. */
  cancelPending(c: LocalContainer): boolean {
    const s = this.state.get(c.id);
    if (!s?.timer) return false;
    clearTimeout(s.timer);
    s.timer = undefined;
    s.restarting = false;
    c.restarting = false;
    return true;
  }

  forget(c: LocalContainer): void {
    this.cancelPending(c);
    this.state.delete(c.id);
  }

  /** The server is closing: nothing restarts from now on (the records bring them back next time). */
  close(): void {
    this.closing = true;
    for (const s of this.state.values()) clearTimeout(s.timer);
  }

  /**
   * At the runtime's start: the containers dockerd's restore starts again (`always`; on-failure
   * after a failure; `unless-stopped` unless the user stopped it), as the server's own start.
   */
  comeBack(containers: readonly LocalContainer[]): LocalContainer[] {
    if (this.closing) return [];
    return containers.filter((c) => c.status === 'exited'
      && shouldRestart(specRestartPolicy(c.spec), c.exitCode, c.manuallyStopped === true, c.restartCount ?? 0));
  }
}
