import { writeFileSync } from 'node:fs';
import { EngineError } from '../../../engine-api/engine-error.js';
import { hostSpecOf } from '../../../engine-api/container-spec.js';
import type { ContainerCgroup } from '../../linux/cgroups.js';
import type { ExecutorLimits, LocalContainer } from '../local/local-container.js';
import { cgroupInfo } from './cgroup-info.js';
import { CGROUP_HOST_FIELDS } from './resource-limits.js';
import type { SandboxState } from './sandbox-state.js';

/** The sandbox's resource limits after create: `docker update` and what `docker info` says it can limit. */
export class SandboxLimits implements ExecutorLimits {
  constructor(private readonly state: SandboxState) {}

  /**
   * `docker update`: the limits are checked as at create, written to the running container's
   * groups (made when it had none for a controller, its processes moved in), and kept for its next start.
   */
  async update(c: LocalContainer, update: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { running, groups, cgroups } = this.state;
    const refused = Object.keys(update).filter((field) => !(CGROUP_HOST_FIELDS as readonly string[]).includes(field));
    if (refused.length > 0) {
      throw EngineError.invalidParameter(`${refused.join(', ')}: updating containers is not supported by the sandbox runtime (only ${CGROUP_HOST_FIELDS.join(', ')})`);
    }
    // The update's fields, typed as at create, over the container's spec.
    const updated = hostSpecOf(update);
    const changed = Object.fromEntries(Object.keys(update).map((field) => {
      const key = (field.charAt(0).toLowerCase() + field.slice(1)) as keyof typeof updated;
      return [key, updated[key]];
    }));
    const limits = this.state.limitsOf({ ...c.spec, host: { ...c.spec.host, ...changed } });
    const entry = running.get(c.id);
    if (!entry || !cgroups) return update;
    let group: ContainerCgroup;
    try {
      group = cgroups.create(c.id, limits);
      const pids = new Set([...(c.process?.pids?.() ?? []), ...(groups.get(c.id)?.pids() ?? [])]);
      for (const pid of pids) for (const procs of group.procs) moveInto(procs, pid);
    } catch (error) {
      // The kernel's word, e.g. EBUSY for a memory limit below what the container already uses.
      throw EngineError.invalidParameter(`Cannot update container ${c.id}: ${(error as Error).message}`);
    }
    groups.set(c.id, group);
    running.set(c.id, { ...entry, cgroupProcs: group.procs });
    return update;
  }

  /** `docker info`: what this server can limit, from the cgroup controllers it found (cgroup-info.ts). */
  systemInfo(): Record<string, unknown> {
    return { ...cgroupInfo(this.state.cgroups), ...(this.state.rootless ? { SecurityOptions: ['name=rootless'] } : {}) };
  }
}

/**
 * Moves one process into a group. A launcher's short-lived helpers (the user namespace's staging
 * `mount`s) can exit between listing and moving: a process that is gone (ESRCH) needs no move.
 */
function moveInto(procs: string, pid: number): void {
  try {
    writeFileSync(procs, String(pid));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
