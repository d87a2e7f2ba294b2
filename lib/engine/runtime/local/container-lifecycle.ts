import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { HealthMonitor, mergeHealthcheck, probeArgv, validateHealthcheck, type HealthConfig, type ProbeExec } from './healthcheck.js';
import type { LocalContainer, LocalImage } from './local-container.js';
import { RestartSupervisor, validateCreatePolicy, type SupervisorHost } from './restart-supervisor.js';

/**
 * Healthchecks and restart policies of a local runtime: the hooks its lifecycle calls at create,
 * start, exit, stop and removal. Healthchecks need the executor's exec (the probe runs as a
 * `docker exec` would, confined like the container); without one a healthcheck is refused.
 */
export class ContainerLifecycle {
  readonly supervisor: RestartSupervisor;
  private readonly monitors = new Map<string, HealthMonitor>();

  constructor(
    private readonly runtimeName: string,
    private readonly exec: ProbeExec | undefined,
    private readonly publish: (action: string, c: LocalContainer) => void,
    host: SupervisorHost,
  ) {
    this.supervisor = new RestartSupervisor(host);
  }

  /** At create: refuses what dockerd refuses, and answers the spec with the image's healthcheck merged in. */
  prepare(spec: ContainerSpec, image: LocalImage): ContainerSpec {
    validateCreatePolicy(spec);
    validateHealthcheck(spec.healthcheck);
    const merged = mergeHealthcheck(spec.healthcheck as HealthConfig | undefined, image.healthcheck);
    if (probeArgv(merged) && !this.exec) throw EngineError.invalidParameter(`Healthcheck is not supported by the ${this.runtimeName} runtime (it cannot run a command in a container)`);
    return merged ? { ...spec, healthcheck: merged } : spec;
  }

  /** Before a start (the user's or the supervisor's). */
  starting(c: LocalContainer): void {
    this.supervisor.starting(c);
  }

  /** Once its process runs: the health monitor, when it has a healthcheck to run. */
  started(c: LocalContainer): void {
    this.stopMonitor(c);
    const config = c.spec.healthcheck as HealthConfig | undefined;
    const argv = probeArgv(config);
    if (!argv || !this.exec || !config) return;
    this.monitors.set(c.id, new HealthMonitor(c, argv, config, this.exec, (status) => this.publish(`health_status: ${status}`, c)));
  }

  /** After its exit: true when the restart policy restarts it. */
  exited(c: LocalContainer, code: number): boolean {
    this.stopMonitor(c);
    return this.supervisor.exited(c, code);
  }

  removed(c: LocalContainer): void {
    this.stopMonitor(c);
    this.supervisor.forget(c);
  }

  close(): void {
    this.supervisor.close();
    for (const m of this.monitors.values()) m.stop();
    this.monitors.clear();
  }

  private stopMonitor(c: LocalContainer): void {
    this.monitors.get(c.id)?.stop();
    this.monitors.delete(c.id);
  }
}
