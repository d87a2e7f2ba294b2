import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { LocalContainer } from './local-container.js';
import type { LocalVolumes } from './local-volumes.js';
import { containerMounts, type MountPoint } from './container-mounts.js';

/**
 * The mounts of a new container, when the runtime has volumes (container-mounts.ts): named ones
 * made on first use, anonymous ones made for it, and those of `VolumesFrom` containers looked up
 * through `resolve`. Anonymous volumes made for a body that is then refused are removed again.
 */
export function mountsFor(
  spec: ContainerSpec,
  volumes: LocalVolumes | undefined,
  runtime: string,
  resolve: (ref: string) => LocalContainer,
): MountPoint[] | undefined {
  if (!volumes) return undefined;
  const made: MountPoint[] = [];
  try {
    return containerMounts(spec, {
      runtime,
      named: (name, labels) => volumes.named(name, spec.labels, labels),
      anonymous: (labels) => {
        const volume = volumes.anonymous(spec.labels, labels);
        made.push({ Type: 'volume', Name: volume.name, Source: volume.source, Destination: '', Mode: '', RW: true, Propagation: '', anonymous: true });
        return volume;
      },
      mountsOf: (ref) => {
        try {
          return resolve(ref).mounts ?? [];
        } catch (error) {
          // dockerd answers 400 here (a bad create body), not the lookup's 404, which the CLI would take for a missing image and pull.
          if (error instanceof EngineError && error.kind === 'NotFound') throw EngineError.invalidParameter(error.message);
          throw error;
        }
      },
    });
  } catch (error) {
    removeAnonymous(made, volumes);
    throw error;
  }
}

/** Removes the anonymous volumes among `mounts` (`docker rm -v`, `--rm`); one still in use by another container stays, as with dockerd. */
export function removeAnonymous(mounts: readonly MountPoint[], volumes: LocalVolumes | undefined): void {
  for (const m of mounts) {
    if (m.anonymous && m.Name) {
      try {
        volumes?.remove(m.Name, false);
      } catch {
        // In use through VolumesFrom: dockerd keeps it too.
      }
    }
  }
}

/**
 * Fills each empty volume with what the image has at its path, once, before the first start
 * (dockerd's copy-up), through the executor's `copy`. Answers whether a mount changed (its
 * record is to be saved).
 */
export async function copyUp(
  c: LocalContainer,
  volumes: LocalVolumes | undefined,
  copy: ((c: LocalContainer, path: string, into: string) => Promise<void>) | undefined,
): Promise<boolean> {
  if (!copy || !c.mounts?.some((m) => m.copy)) return false;
  for (const m of c.mounts) {
    if (!m.copy || m.Type !== 'volume' || !m.Name) continue;
    if (await volumes?.isEmpty(m.Name)) await copy(c, m.Destination, m.Source);
    m.copy = false;
  }
  return true;
}
