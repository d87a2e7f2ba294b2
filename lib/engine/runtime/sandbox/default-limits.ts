import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { Cgroups } from '../../linux/cgroups.js';
import type { ResourceLimits } from '../../linux/cgroup-limits.js';

/** The bounds every sandbox container gets unless its create body says otherwise, and the size caps of the image store. */
export interface SandboxDefaults {
  /** `pids.max` of a container that sets no PidsLimit (podman's default, 2048); -1 in the body is unlimited, as in Docker. */
  pidsLimit: number;
  /** Bytes of memory of a container that sets no Memory (1 GiB), with as much swap again, as dockerd gives `--memory` alone. */
  defaultMemory: number;
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
  /** Bytes one owner's containers (their writes to their root copies) and volumes may take on disk together. */
  maxOwnerDiskBytes: number;
  /** Milliseconds between two walks of the owners' trees for {@link maxOwnerDiskBytes}. */
  diskCheckIntervalMs: number;
}

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Tmpfs mounts of the default size a container may have at most (the default maxTmpfsBytes is this many tmpfsSize). */
export const TMPFS_MOUNTS_AT_CAP = 4;

/**
 * The defaults: podman's pids limit, 1 GiB of memory, 64 MiB per tmpfs (Docker's /dev/shm size) and 256 MiB for
 * all of them, 4 GiB per load archive and per layer, 20 GiB of disk per owner checked every 10 s.
 */
export const SANDBOX_DEFAULTS: Readonly<SandboxDefaults> = Object.freeze({
  pidsLimit: 2048,
  defaultMemory: GIB,
  tmpfsSize: 64 * MIB,
  maxTmpfsBytes: TMPFS_MOUNTS_AT_CAP * 64 * MIB,
  maxLoadBytes: 4 * GIB,
  maxLayerBytes: 4 * GIB,
  maxBuildContextBytes: 4 * GIB,
  maxOwnerDiskBytes: 20 * GIB,
  diskCheckIntervalMs: 10_000,
});

/**
 * A container's limits with the defaults added where its body sets none: the pids limit
 * (PidsLimit unset or 0; -1 asks for no limit, as in Docker) and the memory limit (Memory unset
 * or 0: `defaultMemory`, with as much swap again unless MemorySwap is -1, unlimited swap, as
 * dockerd treats `--memory` alone). Where this server cannot manage a controller, its default
 * cannot be applied and is left out rather than refusing every container (the README says so;
 * `docker info` warns that there is no such limit).
 */
export function withDefaults(limits: ResourceLimits, { host }: ContainerSpec, cgroups: Cgroups | undefined, defaults: Pick<SandboxDefaults, 'pidsLimit' | 'defaultMemory'>): ResourceLimits {
  const out = { ...limits };
  if (out.pids === undefined && host.pidsLimit !== -1 && cgroups?.controllers.includes('pids')) out.pids = defaults.pidsLimit;
  if (out.memory === undefined && cgroups?.controllers.includes('memory')) {
    out.memory = defaults.defaultMemory;
    out.memorySwap = host.memorySwap === -1 ? -1 : 2 * defaults.defaultMemory;
  }
  return out;
}
