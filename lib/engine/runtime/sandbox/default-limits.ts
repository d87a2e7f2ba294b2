import type { ContainerCreateBody } from '../../../engine-api/runtime-types.js';
import type { Cgroups } from './cgroups.js';
import type { ResourceLimits } from './resource-limits.js';

/** The bounds every sandbox container gets unless its create body says otherwise, and the size caps of the image store. */
export interface SandboxDefaults {
  /** `pids.max` of a container that sets no PidsLimit (podman's default, 2048); -1 in the body is unlimited, as in Docker. */
  pidsLimit: number;
  /** Bytes of a `Tmpfs` mount without `size=`, and the most a `size=` may ask for. */
  tmpfsSize: number;
  /** Bytes all of a container's tmpfs mounts may hold together (a mount without `size=` counts at tmpfsSize). */
  maxTmpfsBytes: number;
  /** Bytes a `docker load` archive may hold (uncompressed), which is also what its spool may take on disk. */
  maxLoadBytes: number;
  /** Bytes one pulled layer may hold (uncompressed). */
  maxLayerBytes: number;
  /** Bytes a build context may hold (uncompressed), which is also what its spool may take on disk. */
  maxBuildContextBytes: number;
}

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Tmpfs mounts of the default size a container may have at most (the default maxTmpfsBytes is this many tmpfsSize). */
const TMPFS_MOUNTS_AT_CAP = 4;

/**
 * The defaults: podman's pids limit, 64 MiB per tmpfs (Docker's /dev/shm size) and 256 MiB for
 * all of them, 4 GiB per load archive and per layer.
 */
export const SANDBOX_DEFAULTS: Readonly<SandboxDefaults> = Object.freeze({
  pidsLimit: 2048,
  tmpfsSize: 64 * MIB,
  maxTmpfsBytes: TMPFS_MOUNTS_AT_CAP * 64 * MIB,
  maxLoadBytes: 4 * GIB,
  maxLayerBytes: 4 * GIB,
  maxBuildContextBytes: 4 * GIB,
});

/** Defaults and validates the limit options of sandboxRuntime once, at construction; a bad one throws a TypeError naming it. */
export function sandboxDefaults(options: Partial<Record<keyof SandboxDefaults, unknown>>, cgroups: Cgroups | undefined): SandboxDefaults {
  const out = { ...SANDBOX_DEFAULTS };
  for (const key of Object.keys(SANDBOX_DEFAULTS) as (keyof SandboxDefaults)[]) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new TypeError(`sandboxRuntime option "${key}" must be a positive integer`);
    out[key] = value;
  }
  // Follows a larger tmpfsSize unless set: a container keeps room for a few mounts of the cap.
  if (options.maxTmpfsBytes === undefined) out.maxTmpfsBytes = TMPFS_MOUNTS_AT_CAP * out.tmpfsSize;
  else if (out.maxTmpfsBytes < out.tmpfsSize) throw new TypeError('sandboxRuntime option "maxTmpfsBytes" must be at least "tmpfsSize" (one mount of the default size)');
  if (options.pidsLimit !== undefined && !cgroups?.controllers.includes('pids')) {
    throw new TypeError('sandboxRuntime option "pidsLimit" needs the cgroup v1 pids controller, which this server cannot manage (or option "cgroups" is false)');
  }
  return out;
}

/**
 * A container's limits with the default pids limit added when its body sets none (PidsLimit
 * unset or 0; -1 asks for no limit, as in Docker). Where this server cannot manage the pids
 * cgroup, the default cannot be applied and is left out (the README says so).
 */
export function withDefaultPids(limits: ResourceLimits, body: ContainerCreateBody, cgroups: Cgroups | undefined, pidsLimit: number): ResourceLimits {
  const requested = (body.HostConfig as { PidsLimit?: unknown } | undefined)?.PidsLimit;
  if (limits.pids !== undefined || requested === -1 || !cgroups?.controllers.includes('pids')) return limits;
  return { ...limits, pids: pidsLimit };
}
