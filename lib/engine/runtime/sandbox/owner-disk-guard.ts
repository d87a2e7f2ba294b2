import { ownerOf } from '../../policy/owner-label.js';
import type { LocalRuntime } from '../local/local-runtime.js';
import { OwnerDiskCap, type DiskCapContainer, type DiskCapVolume } from './owner-disk-cap.js';

/** What {@link guardOwnerDisk} needs besides the runtime. */
export interface OwnerDiskGuardOptions {
  /** Bytes per owner (sandboxRuntime's `maxOwnerDiskBytes`). */
  maxBytes: number;
  /** Milliseconds between the end of one walk and the start of the next (`diskCheckIntervalMs`). */
  intervalMs: number;
  /** Where a container's writes are: its overlay's upper layer, or a whole copy of its image (`copy`). */
  rootfs(id: string): { path: string; copy: boolean };
  /** The image root a container's copy starts as (the store's, shifted for the user namespace). */
  imageRootfs(imageId: string): Promise<string | undefined>;
  /**
   * Why the cap killed a container, by id: the executor reports it as the exit's State.Error
   * (LocalProcess.stopReason) and forgets it at the container's next start or removal.
   */
  stopReasons: Map<string, string>;
}

/**
 * Puts an {@link OwnerDiskCap} on a sandbox runtime: the operations that make an owner's
 * containers or volumes grow on disk (create, start and restart, volume create, `docker cp` into
 * a container, commit, build) are refused with a 403 naming the cap while their owner is over it,
 * and the walks stop when the runtime closes. The owner is the `dockgate.owner` label of the body
 * (create, volume create), of the container named (start, cp, commit) or of the build's RUN
 * containers; nothing is refused where there is none.
 */
export function guardOwnerDisk(runtime: LocalRuntime, options: OwnerDiskGuardOptions): void {
  const cap = new OwnerDiskCap({
    containers: async () => {
      const rows = await runtime.list({ all: true, filters: new Map() });
      const found = await Promise.all(rows.map((row) => runtime.inspect(String(row.Id)).catch(() => undefined)));
      return found.filter((c) => c !== undefined).map((c): DiskCapContainer => {
        const owner = ownerOf((c.Config as { Labels?: unknown } | undefined)?.Labels);
        const mounts = (c.Mounts ?? []) as { Type?: string; Name?: string }[];
        return {
          id: String(c.Id), imageId: String(c.Image), running: (c.State as { Running?: boolean } | undefined)?.Running === true,
          volumes: mounts.filter((m) => m.Type === 'volume' && typeof m.Name === 'string').map((m) => m.Name as string),
          ...(owner !== undefined ? { owner } : {}),
        };
      });
    },
    volumes: async () => {
      if (!runtime.createVolume) return [];
      const { Volumes } = await runtime.listVolumes(new Map(), '1.41');
      return Volumes.map((v): DiskCapVolume => {
        const owner = ownerOf(v.Labels);
        return { name: String(v.Name), path: String(v.Mountpoint), ...(owner !== undefined ? { owner } : {}) };
      });
    },
    rootfs: options.rootfs,
    imageRootfs: options.imageRootfs,
    kill: async (id, reason) => {
      options.stopReasons.set(id, reason);
      await runtime.kill(id, 'SIGKILL');
    },
  }, options.maxBytes, options.intervalMs);
  const ownerOfContainer = async (ref: string): Promise<string | undefined> => {
    // A reference naming nothing is left to the operation, which answers its own 404.
    const found = await runtime.inspect(ref).catch(() => undefined);
    return ownerOf((found?.Config as { Labels?: unknown } | undefined)?.Labels);
  };

  const { create, start, close, putArchive } = runtime;
  runtime.create = async (request) => {
    await cap.admit(ownerOf(request.spec.labels), 'create');
    return create.call(runtime, request);
  };
  runtime.start = async (ref) => {
    await cap.admit(await ownerOfContainer(ref), 'start');
    return start.call(runtime, ref);
  };
  if (putArchive) {
    runtime.putArchive = async (ref, path, tar, o) => {
      await cap.admit(await ownerOfContainer(ref), 'copying into a container');
      return putArchive.call(runtime, ref, path, tar, o);
    };
  }
  const { createVolume, commit, build } = runtime;
  if (createVolume) {
    runtime.createVolume = async (body, apiVersion) => {
      await cap.admit(ownerOf(body.Labels), 'volume create');
      return createVolume.call(runtime, body, apiVersion);
    };
  }
  if (commit) {
    runtime.commit = async (request) => {
      await cap.admit(await ownerOfContainer(request.container), 'commit');
      return commit.call(runtime, request);
    };
  }
  if (build) {
    runtime.build = async (request) => {
      await cap.admit(ownerOf(request.containerLabels), 'build');
      return build.call(runtime, request);
    };
  }
  runtime.close = async () => {
    await cap.close();
    return close.call(runtime);
  };
}
