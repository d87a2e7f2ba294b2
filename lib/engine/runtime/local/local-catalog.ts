import { EngineError } from '../../../engine-api/engine-error.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type { ImageDeleteItem, ImageListOptions, ImagePruneReport, ImageRemoveOptions } from '../../../engine-api/image-operations.js';
import type { NetworkInspectOptions } from '../../../engine-api/network-operations.js';
import type { EventBus } from './event-bus.js';
import { imageMatches } from './image-filter.js';
import { imageHistoryView, imageInspectView, imageSummaryView } from './image-views.js';
import type { LocalContainer, LocalImage, LocalNetworkName, LocalUserNetworks } from './local-container.js';
import type { ImageUser, LocalImageStore } from './local-image-store.js';
import { LocalNetworks } from './local-networks.js';

/**
 * The optional operations of the local runtimes: their images (the host's configured ones and
 * their tags), the networks their containers really have, no volumes, and their `/info` part.
 */
export class LocalCatalog {
  private readonly startedAt = new Date();
  private readonly networks: LocalNetworks;

  constructor(
    private readonly runtimeName: string,
    private readonly images: LocalImageStore,
    networks: readonly LocalNetworkName[],
    private readonly bus: EventBus,
    private readonly containers: () => LocalContainer[],
    userNetworks?: LocalUserNetworks,
    /** The OCI name clients know the runtime by (LocalExecutor's `ociRuntime`), listed as the default. */
    private readonly ociRuntime?: string,
  ) {
    this.networks = new LocalNetworks(networks, userNetworks);
  }

  async listImages({ filters, sharedSize }: ImageListOptions): Promise<Record<string, unknown>[]> {
    const find = (ref: string): LocalImage | undefined => this.images.find(ref);
    return this.images
      .all()
      .filter(({ image, refs }) => imageMatches(image, refs, filters, find, this.startedAt))
      .map(({ image, refs }) => ({
        ...imageSummaryView(image, refs, this.startedAt, this.containers().filter((c) => c.image.id === image.id).length),
        // Local images share no layers; -1 means "not computed" when the client did not ask.
        SharedSize: sharedSize ? 0 : -1,
      }));
  }

  async inspectImage(ref: string): Promise<Record<string, unknown>> {
    const image = this.images.resolve(ref);
    return imageInspectView(image, this.images.refsOf(image.id), this.startedAt, 'none');
  }

  async imageHistory(ref: string): Promise<Record<string, unknown>[]> {
    const image = this.images.resolve(ref);
    return imageHistoryView(image, this.images.refsOf(image.id), this.startedAt, this.runtimeName);
  }

  async tagImage(ref: string, target: string): Promise<void> {
    this.images.tag(ref, target);
    this.bus.publishImage('tag', this.images.resolve(target).id, target);
  }

  async removeImage(ref: string, { force }: ImageRemoveOptions): Promise<ImageDeleteItem[]> {
    const { id } = this.images.resolve(ref);
    const removed = this.images.remove(ref, force, this.imageUsers());
    for (const item of removed) {
      if ('Untagged' in item) this.bus.publishImage('untag', id, item.Untagged);
      else this.bus.publishImage('delete', item.Deleted, item.Deleted);
    }
    return removed;
  }

  async pruneImages(filters: EngineFilters): Promise<ImagePruneReport> {
    return this.images.prune(filters, this.imageUsers(), (image) => image.size ?? 0);
  }

  private imageUsers(): ImageUser[] {
    return this.containers().map((c) => ({ id: c.id, imageId: c.image.id, running: c.status === 'running' }));
  }

  async listNetworks(filters: EngineFilters): Promise<Record<string, unknown>[]> {
    return this.networks.list(filters, this.containers());
  }

  async inspectNetwork(ref: string, { scope }: NetworkInspectOptions): Promise<Record<string, unknown>> {
    return this.networks.inspect(ref, scope, this.containers());
  }

  /** No volume storage: the list is truthfully empty; creating one is not offered (501). */
  async listVolumes(): Promise<{ Volumes: Record<string, unknown>[]; Warnings: string[] | null }> {
    return { Volumes: [], Warnings: null };
  }

  async inspectVolume(name: string): Promise<Record<string, unknown>> {
    throw EngineError.notFound(`get ${name}: no such volume`);
  }

  /** No storage driver, no image store: images are what the host configured. */
  async systemInfo(): Promise<Record<string, unknown>> {
    return {
      Driver: 'none',
      DriverStatus: [['Images', `configured by the host (${this.runtimeName} runtime)`]],
      Runtimes: { [this.runtimeName]: { path: '' }, ...(this.ociRuntime ? { [this.ociRuntime]: { path: '' } } : {}) },
      DefaultRuntime: this.ociRuntime ?? this.runtimeName,
    };
  }
}
