import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { StopOptions } from '../../../engine-api/runtime-types.js';
import { signalNumber, stopSignal } from '../../../engine-api/signal.js';
import type { LocalContainer, LocalProcess } from './local-container.js';
import type { RestartSupervisor } from './restart-supervisor.js';
import { MAX_TIMER_MS } from './event-bus.js';

/** What `docker kill` and `docker stop` need from the runtime. */
export interface StoppingHost {
  resolve(ref: string): LocalContainer;
  readonly supervisor: RestartSupervisor;
  /** Keeps the container's changed record. */
  save(c: LocalContainer): void;
  publish(action: string, c: LocalContainer, extra?: Record<string, string>): void;
}

/**
 * `docker kill` and `docker stop` of local containers: the signal (a `kill` event for each), the
 * stop's grace period before SIGKILL, and the restart policy told that the user stopped it.
 */
export class ContainerStopping {
  constructor(private readonly host: StoppingHost) {}

  async kill(ref: string, signal: NodeJS.Signals): Promise<void> {
    let c: LocalContainer;
    try {
      c = this.host.resolve(ref);
    } catch (error) {
      // dockerd prefixes every kill failure, even the lookup (daemon/kill.go).
      if (error instanceof EngineError && error.kind === 'NotFound') throw EngineError.notFound(`Cannot kill container: ${ref}: ${error.message}`);
      throw error;
    }
    const { supervisor } = this.host;
    // dockerd's kill with SIGKILL or the stop signal cancels the restart policy's next restart (ExitOnNext).
    const cancel = signal === 'SIGKILL' || signal === stopSignal(c.spec.stopSignal);
    if (c.restarting) {
      supervisor.stoppedByUser(c, cancel);
      if (cancel) supervisor.cancelPending(c);
      this.host.save(c);
      return;
    }
    await c.startup?.catch(() => undefined);
    const proc = c.process;
    if (c.status !== 'running' || !proc) throw EngineError.conflict(`Cannot kill container: ${ref}: Container ${c.id} is not running`);
    supervisor.stoppedByUser(c, cancel);
    this.signal(c, proc, signal);
    // dockerd's kill with SIGKILL returns once the container is gone, so `docker kill; docker inspect` sees it exited.
    if (signal === 'SIGKILL') await settled(proc);
  }

  async stop(ref: string, { timeout, signal }: StopOptions): Promise<void> {
    const c = this.host.resolve(ref);
    const { supervisor } = this.host;
    // A container waiting for its restart stops by not restarting (dockerd cancels its restart manager).
    if (supervisor.cancelPending(c)) {
      supervisor.stoppedByUser(c);
      this.host.save(c);
      this.host.publish('stop', c);
      return;
    }
    await c.startup?.catch(() => undefined);
    const proc = c.process;
    if (c.status !== 'running' || !proc) throw EngineError.notModified('Container is already stopped');
    supervisor.stoppedByUser(c);
    const seconds = timeout ?? c.spec.stopTimeout ?? 10;
    this.signal(c, proc, signal ?? stopSignal(c.spec.stopSignal));
    // Negative waits for the exit, as dockerd does; so does a wait longer than a timer can hold.
    if (seconds >= 0 && seconds * 1000 <= MAX_TIMER_MS) {
      const grace = new AbortController();
      const exitedInTime = await Promise.race([proc.exited.then(() => true), delay(seconds * 1000, false, { signal: grace.signal }).catch(() => false)]);
      grace.abort();
      if (!exitedInTime) this.signal(c, proc, 'SIGKILL');
    }
    await settled(proc);
    this.host.publish('stop', c);
  }

  private signal(c: LocalContainer, proc: LocalProcess, signal: NodeJS.Signals): void {
    this.host.publish('kill', c, { signal: String(signalNumber(signal)) });
    proc.kill(signal);
  }
}

/** Resolves after the exit bookkeeping (status, waits, auto-removal) has run. */
export async function settled(proc: LocalProcess): Promise<void> {
  await proc.exited;
  await new Promise((resolve) => setImmediate(resolve));
}
