import type { ImageStoreApi } from '../../images/image-store-types.js';
import { normalizeRef, repositoryOf, tagOf } from '../../images/store/references.js';

/**
 * The store as the sandbox runtime reads it: a reference to any tag of one of `repositories`
 * (`alpine:3.20`) that names no image resolves to the offline busybox image, which gets that tag.
 * The demo has always served busybox and alpine of every tag from busybox-static; an explicit
 * `docker pull` still fetches the real image from its registry (pull does not go through here).
 */
export function withSeedAliases(store: ImageStoreApi, repositories: readonly string[]): ImageStoreApi {
  const aliased = (ref: string): string | undefined => {
    try {
      const familiar = normalizeRef(ref);
      return tagOf(familiar) !== undefined && repositories.includes(repositoryOf(familiar)) ? familiar : undefined;
    } catch {
      return undefined;
    }
  };
  return {
    resolve: async (ref) => {
      const found = await store.resolve(ref);
      const alias = found ? undefined : aliased(ref);
      if (!alias) return found;
      await store.seedBusybox([alias]);
      return store.resolve(alias);
    },
    materialize: (id, dest, shift) => store.materialize(id, dest, shift),
    seedBusybox: (tags) => store.seedBusybox(tags),
    pull: (request) => store.pull(request),
    ...(store.push ? { push: store.push.bind(store) } : {}),
    ...(store.login ? { login: store.login.bind(store) } : {}),
    ...(store.imageRootfs ? { imageRootfs: store.imageRootfs.bind(store) } : {}),
    ...(store.import ? { import: store.import.bind(store) } : {}),
    load: (archive, options) => store.load(archive, options),
    save: (refs, signal) => store.save(refs, signal),
    tag: (source, repo, tag) => store.tag(source, repo, tag),
    remove: (ref, options) => store.remove(ref, options),
    prune: (filters) => store.prune(filters),
    list: (filters, all) => store.list(filters, all),
    inspect: (ref) => store.inspect(ref),
    history: (ref) => store.history(ref),
    ...(store.config ? { config: store.config.bind(store) } : {}),
    ...(store.storeLayer ? { storeLayer: store.storeLayer.bind(store) } : {}),
    ...(store.createImage ? { createImage: store.createImage.bind(store) } : {}),
  };
}
