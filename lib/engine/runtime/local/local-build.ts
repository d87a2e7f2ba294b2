import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { BuildOperations, BuildRequest, CommitContainerRequest } from '../../../engine-api/build-operations.js';
import type { ContainerRuntime } from '../../../engine-api/runtime-types.js';
import type { ImageConfigBlob, ImageRunConfig, ImageStoreApi, StoredLayer } from '../../images/image-store-types.js';
import { serverPlatform } from '../../images/store/platform.js';
import { BuildCache } from '../../build/build-cache.js';
import type { BuildBackend } from '../../build/build-backend.js';
import { classicBuild } from '../../build/classic-builder.js';
import { commitConfig } from '../../build/commit-config.js';
import type { ExecutorBuild, ExecutorFilesystem, LocalContainer } from './local-container.js';
import { withoutMountedPaths } from './mounted-paths.js';

/** What the build and commit operations need from a local runtime. */
export interface LocalBuildHost {
  runtime: ContainerRuntime;
  store: Promise<ImageStoreApi>;
  resolve(ref: string): LocalContainer;
  /** Publishes a container event (`commit`), as dockerd does. */
  publish(action: string, c: LocalContainer): void;
}

/**
 * `POST /commit` and `POST /build` for a local runtime whose executor builds (`build`: where,
 * how big a context, `--chown`) and can turn a container's changes into a layer (its
 * `filesystem`), and whose image store can write images. RUN steps go
 * through the runtime's own create/start/wait, so they run as every container of the runtime.
 */
export function localBuildOperations(host: LocalBuildHost, build: ExecutorBuild, fs: ExecutorFilesystem): BuildOperations {
  const writable = async () => {
    const store = await host.store;
    if (!store.createImage || !store.storeLayer || !store.imageRootfs) throw EngineError.unsupported('making images', host.runtime.name);
    return store as Required<Pick<ImageStoreApi, 'createImage' | 'storeLayer' | 'imageRootfs'>> & ImageStoreApi;
  };
  const layerOf = async (c: LocalContainer): Promise<StoredLayer> =>
    fs.commitLayer(c, withoutMountedPaths(await fs.changes(c)), await writable());
  let cache: Promise<BuildCache> | undefined;

  const commit = async (request: CommitContainerRequest): Promise<{ Id: string }> => {
    const c = host.resolve(request.container);
    const store = await writable();
    const parent = await store.resolve(c.image.id);
    if (!parent) throw EngineError.notFound(`No such image: ${c.image.id}`);
    const inspected = await host.runtime.inspect(c.id);
    const containerConfig = (inspected.Config ?? {}) as ImageRunConfig;
    const config = commitConfig(containerConfig, request.config as ImageRunConfig | undefined, request.changes);
    const pause = request.pause && c.status === 'running' && c.paused !== true;
    if (pause) await host.runtime.pause?.(c.id);
    let layer: StoredLayer;
    try {
      layer = await layerOf(c);
    } finally {
      if (pause) await host.runtime.unpause?.(c.id).catch(() => undefined);
    }
    const created = new Date().toISOString();
    const blob: ImageConfigBlob = {
      ...parent.config,
      created,
      ...(request.author ? { author: request.author } : {}),
      config,
      container: c.id,
      rootfs: { type: 'layers', diff_ids: [...parent.config.rootfs.diff_ids, layer.diffId] },
      history: [
        ...(parent.config.history ?? []),
        { created, created_by: c.argv.join(' '), ...(request.author ? { author: request.author } : {}), ...(request.comment ? { comment: request.comment } : {}) },
      ],
    };
    if (!request.author) delete blob.author;
    const id = await store.createImage(blob, request.ref ? [request.ref] : [], parent.id);
    host.publish('commit', c);
    return { Id: id };
  };

  const backend = async (): Promise<BuildBackend> => {
    const store = await writable();
    return {
      runtime: host.runtime,
      store: {
        resolve: (ref) => store.resolve(ref),
        imageRootfs: (id) => store.imageRootfs(id),
        storeLayer: (entries) => store.storeLayer(entries),
        createImage: (config, tags, parent) => store.createImage(config, tags, parent),
        config: async (id) => (store.config ? store.config(id) : ((await store.resolve(id))?.config as ImageConfigBlob)),
      },
      containerLayer: async (id) => layerOf(host.resolve(id)),
      resolveUser: async (rootfs, spec) => build.resolveUser(rootfs, spec),
      tempDir: join(build.dir, 'tmp'),
      cache: () => (cache ??= BuildCache.open(join(build.dir, 'cache.json'))),
      maxContextBytes: build.maxContextBytes,
      platform: serverPlatform(),
    };
  };

  return {
    commit,
    build: async (request: BuildRequest): Promise<Readable> => classicBuild(await backend(), request),
  };
}
