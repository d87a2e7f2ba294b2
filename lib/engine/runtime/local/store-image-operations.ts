import type { Readable } from 'node:stream';
import type { ConnectCheck } from '../../../http/checked-fetch.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ImageStoreApi, ResolvedImage } from '../../images/image-store-types.js';
import type { RegistryLoginRequest, RegistryLoginResult } from '../../images/registry/registry-login.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type {
  ImageDeleteItem, ImageImportRequest, ImageListOptions, ImageLoadRequest, ImageOperations, ImagePruneReport, ImageRemoveOptions,
} from '../../../engine-api/image-operations.js';
import type { PullRequest } from '../../../engine-api/runtime-types.js';
import type { PushRequest } from '../../../engine-api/image-operations.js';
import type { EventBus } from './event-bus.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import type { LocalImage } from './local-container.js';
import type { HealthConfig } from './healthcheck.js';

/**
 * A local runtime's image operations through a content-addressed image store: every route
 * (`docker pull/images/inspect/history/tag/rmi/image prune/save/load`) reaches the store, and
 * `create` runs what the store resolves. Image events go on the runtime's bus as dockerd's do.
 */
export class StoreImageOperations implements ImageOperations {
  constructor(
    private readonly store: Promise<ImageStoreApi>,
    private readonly bus: EventBus,
  ) {}

  /** The image a create body names, with its config, or undefined when the store has none. */
  async localImage(ref: string): Promise<LocalImage | undefined> {
    const resolved = await (await this.store).resolve(ref);
    return resolved ? localImageOf(resolved, safeFamiliar(ref)) : undefined;
  }

  async listImages({ filters, all }: ImageListOptions): Promise<Record<string, unknown>[]> {
    return (await this.store).list(filters, all);
  }

  async inspectImage(ref: string): Promise<Record<string, unknown>> {
    return (await this.store).inspect(ref);
  }

  async imageHistory(ref: string): Promise<Record<string, unknown>[]> {
    return (await this.store).history(ref);
  }

  async tagImage(ref: string, target: string): Promise<void> {
    const store = await this.store;
    const colon = target.lastIndexOf(':');
    const split = colon > target.lastIndexOf('/');
    await store.tag(ref, split ? target.slice(0, colon) : target, split ? target.slice(colon + 1) : 'latest');
    const image = await store.resolve(target);
    if (image) this.bus.publishImage('tag', image.id, target);
  }

  async removeImage(ref: string, { force, noprune }: ImageRemoveOptions): Promise<ImageDeleteItem[]> {
    const store = await this.store;
    // inspect, not resolve: resolving may serve (and tag) an alias, and rmi must not create what it removes.
    const id = (await store.inspect(ref).catch(() => undefined))?.Id as string | undefined;
    const removed = await store.remove(ref, { force, noprune });
    for (const item of removed) {
      if ('Untagged' in item) this.bus.publishImage('untag', id ?? '', item.Untagged);
      else if (item.Deleted === id) this.bus.publishImage('delete', item.Deleted, item.Deleted);
    }
    return removed;
  }

  async pruneImages(filters: EngineFilters): Promise<ImagePruneReport> {
    return (await this.store).prune(filters);
  }

  async saveImages(refs: string[], signal: AbortSignal): Promise<Readable> {
    return (await this.store).save(refs, signal);
  }

  async loadImages({ tar, signal, checkNames }: ImageLoadRequest): Promise<Readable> {
    return (await this.store).load(tar, { signal, ...(checkNames ? { checkNames } : {}) });
  }

  /** `docker push` through the store's registry client. */
  async pushImage({ name, tag, registryAuth, signal, connectCheck }: PushRequest): Promise<Readable> {
    const store = await this.store;
    if (!store.push) throw EngineError.notImplemented('pushing images is not supported by this image store');
    return store.push({ name, signal, registryAuth, ...(tag !== undefined && tag !== '' ? { tag } : {}), ...(connectCheck ? { connectCheck } : {}) });
  }

  /** `docker import` through the store; dockerd publishes an `import` image event. */
  async importImage({ tar, source, ref, message, changes }: ImageImportRequest): Promise<string> {
    const store = await this.store;
    if (!store.import) throw EngineError.notImplemented('importing images (fromSrc) is not supported by this image store');
    const id = await store.import(tar, { tags: ref ? [ref] : [], source, changes, ...(message !== undefined ? { message } : {}) });
    this.bus.publishImage('import', id, ref ?? id);
    return id;
  }

  /** `POST /auth`: the store logs in to the registry as dockerd would. */
  async login(request: RegistryLoginRequest, options: { connectCheck?: ConnectCheck } = {}): Promise<RegistryLoginResult> {
    const store = await this.store;
    if (!store.login) throw EngineError.notImplemented('registry login (POST /auth) is not supported by this image store');
    return store.login(request, options);
  }

  async pull({ ref, platform, registryAuth, signal, connectCheck }: PullRequest): Promise<Readable> {
    const store = await this.store;
    let progress: Readable;
    try {
      progress = await store.pull({ ref, signal, ...(platform ? { platform } : {}), ...(registryAuth ? { registryAuth } : {}), ...(connectCheck ? { connectCheck } : {}) });
    } catch (error) {
      // dockerd answers a registry's 401 with a 500 carrying the registry's words: a 401 from the
      // daemon would make the Docker CLI prompt for a login (its privilege func) and wait on stdin.
      if (error instanceof EngineError && error.status === 401) throw EngineError.system(error.message, error);
      throw error;
    }
    progress.once('end', () => {
      void store.resolve(ref).then((image) => image && this.bus.publishImage('pull', image.id, ref), () => undefined);
    });
    return progress;
  }
}

/** The image config (image-spec config.md `config`) as what a local container runs. */
export function localImageOf(resolved: ResolvedImage, ref: string): LocalImage {
  const config = resolved.config.config ?? {};
  const created = resolved.config.created ? new Date(resolved.config.created) : undefined;
  return {
    ref,
    id: resolved.id,
    ...(config.Entrypoint ? { entrypoint: [...config.Entrypoint] } : {}),
    ...(config.Cmd ? { cmd: [...config.Cmd] } : {}),
    ...(config.Env ? { env: [...config.Env] } : {}),
    ...(config.WorkingDir ? { workingDir: config.WorkingDir } : {}),
    ...(config.User ? { user: config.User } : {}),
    ...(config.StopSignal ? { stopSignal: config.StopSignal } : {}),
    ...(config.Labels ? { labels: { ...config.Labels } } : {}),
    ...(config.Healthcheck && typeof config.Healthcheck === 'object' ? { healthcheck: { ...(config.Healthcheck as HealthConfig) } } : {}),
    ...(config.ExposedPorts ? { exposedPorts: Object.keys(config.ExposedPorts) } : {}),
    ...(config.Volumes && Object.keys(config.Volumes).length > 0 ? { volumes: Object.keys(config.Volumes) } : {}),
    ...(created && !Number.isNaN(created.getTime()) ? { created } : {}),
    rootfs: resolved.rootfs,
  };
}

function safeFamiliar(ref: string): string {
  try {
    return familiarImageRef(ref);
  } catch {
    return ref;
  }
}
