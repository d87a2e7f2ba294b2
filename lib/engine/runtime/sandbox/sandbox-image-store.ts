import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ImageStore } from '../../images/image-store.js';
import type { ImageStoreApi, ImageUsage } from '../../images/image-store-types.js';
import { withSeedAliases } from './sandbox-images.js';
import type { SandboxState } from './sandbox-state.js';
import { mappedOwners } from './userns/mapped-owners.js';

/**
 * Opens the runtime's content-addressed image store under `stateDir/images` (called once by the
 * local runtime with its usage callback), seeded with the offline busybox, and records it in the
 * state: the containers' roots are made from it, and the runtime waits for its background builds at close.
 */
export function openSandboxImageStore(state: SandboxState, usage: ImageUsage): Promise<ImageStoreApi> {
  const { insecureRegistries, defaults, busybox, seedTags, seedRepositories } = state.settings;
  const { owners, rootless, mapped } = state;
  const store = ImageStore.open(join(state.stateDir, 'images'), {
    usage, insecureRegistries, maxLoadBytes: defaults.maxLoadBytes, maxLayerBytes: defaults.maxLayerBytes,
    // Each new image's tree for the range of containers without an owner (the first), unpacked
    // while the client goes on: their first container mounts it instead of waiting for the copy.
    prepareShifts: () => (owners ? [owners.of(undefined).map] : []),
    // Rootless: files of other owners given them in the mapped namespace, or (a single id) refused by name.
    ...(rootless ? (mapped ? { namespaceOwners: mappedOwners(mapped) } : { onlyRootOwners: true }) : {}),
  }).then(async (opened) => {
    state.images.opened = opened;
    // The offline busybox: only names that mean no image yet (a pulled busybox is kept).
    if (existsSync(busybox)) await opened.seedBusybox(seedTags);
    return existsSync(busybox) ? withSeedAliases(opened, seedRepositories) : opened;
  });
  state.images.store = store;
  return store;
}
