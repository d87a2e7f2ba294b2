import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import type { ImageOperations } from '../../../engine-api/image-operations.js';
import type { VolumeOperations } from '../../../engine-api/volume-operations.js';
import type { NetworkManagementOperations } from '../../../engine-api/network-operations.js';
import type { LocalContainer, LocalUserNetworks } from './local-container.js';
import type { StoreImageOperations } from './store-image-operations.js';
import type { LocalVolumes } from './local-volumes.js';

/**
 * The operations a local runtime has only where its executor can, as the runtime takes them field by field:
 * every image operation through an image store, the volume routes over a volumes directory, the
 * network routes over user-defined networks. Without them those routes answer 501 (or, for
 * images, the configured images answer).
 */

/** Every image operation (and pull's sibling `login`) through the executor's image store. */
export function storeImageOperations(ops: StoreImageOperations): Required<ImageOperations> & Required<Pick<ContainerRuntime, 'login'>> {
  return {
    listImages: (o) => ops.listImages(o),
    inspectImage: (ref) => ops.inspectImage(ref),
    imageHistory: (ref) => ops.imageHistory(ref),
    tagImage: (ref, target) => ops.tagImage(ref, target),
    removeImage: (ref, o) => ops.removeImage(ref, o),
    pruneImages: (filters) => ops.pruneImages(filters),
    saveImages: (refs, signal) => ops.saveImages(refs, signal),
    loadImages: (request) => ops.loadImages(request),
    pushImage: (request) => ops.pushImage(request),
    importImage: (request) => ops.importImage(request),
    login: (request, options) => ops.login(request, options),
  };
}

/** The volume routes over named volumes the runtime keeps (local-volumes.ts). */
export function volumeOperations(volumes: LocalVolumes): VolumeOperations {
  return {
    listVolumes: async (filters) => volumes.list(filters),
    inspectVolume: async (volume) => volumes.inspect(volume),
    createVolume: async (body) => volumes.create(body),
    removeVolume: async (volume, force) => volumes.remove(volume, force),
    pruneVolumes: async (filters) => volumes.prune(filters),
  };
}

/** The network routes over the executor's user-defined networks; the runtime resolves the containers (`resolve`). */
export function userNetworkOperations(nets: LocalUserNetworks, resolve: (ref: string) => LocalContainer): Required<NetworkManagementOperations> {
  return {
    createNetwork: (body) => nets.create(body),
    removeNetwork: (ref) => nets.remove(ref),
    pruneNetworks: (filters) => nets.prune(filters),
    connectNetwork: (ref, body) => nets.connect(ref, resolve(body.Container), body, (link) => resolve(link).id),
    disconnectNetwork: (ref, container, force) => nets.disconnect(ref, resolve(container), force),
  };
}
