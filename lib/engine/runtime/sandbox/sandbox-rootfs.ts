import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { ImageStoreApi } from '../../images/image-store-types.js';
import type { OverlayRootfs } from './overlay-rootfs.js';
import type { IdMap } from './userns/id-map.js';
import type { RootlessUserns } from './userns/rootless-userns.js';
import { SandboxUserns } from './userns/sandbox-userns.js';

/** A container as its root filesystem needs it: its id, image and spec (its owner's labels). */
export interface RootfsContainer {
  id: string;
  image: { id: string };
  spec: ContainerSpec;
}

/** What {@link SandboxRootfs} is made with: the runtime's directories, overlays, user namespaces and store. */
export interface RootfsDeps {
  /** `stateDir/containers`. */
  containersDir: string;
  /** The overlays (root server); none: every container gets a copy of its image's tree. */
  overlays: OverlayRootfs | undefined;
  /** Rootless with a subordinate range: the namespace mapping it. */
  mapped: RootlessUserns | undefined;
  /** A container's user namespace (its owner's range); none without option `userns`. */
  usernsOf(spec: ContainerSpec): SandboxUserns | undefined;
  /** The image store, once the runtime opened it (rejects before). */
  store(): Promise<ImageStoreApi>;
}

/**
 * Each container's root: an overlay whose lower layer is the image's tree unpacked once for the
 * owner's range, shared by all of that owner's containers of the image (overlay-rootfs.ts). A
 * server that is not root cannot mount one: its containers get a copy of the tree instead. The
 * root is made at the container's first start or copy and kept until it is removed: a restarted
 * container keeps its writes, as with dockerd. Its overlay is mounted again when it is not
 * (after a server restart).
 */
export class SandboxRootfs {
  constructor(private readonly deps: RootfsDeps) {}

  /** Where a copy of the image is (a container made by a server before overlays, or by one that is not root). */
  copyOf(id: string): string {
    return join(this.deps.containersDir, id, 'rootfs');
  }

  /** The container's own writes: its overlay's upper layer, or its whole copy. */
  writableOf(id: string): { path: string; copy: boolean } {
    const { overlays } = this.deps;
    return !overlays || existsSync(this.copyOf(id)) ? { path: this.copyOf(id), copy: true } : { path: overlays.paths(id).upper, copy: false };
  }

  /** The image's tree for the range; when the image was removed since (rmi -f past a stopped container), the one it was mounted on (the store keeps it). */
  async lowerOf(opened: ImageStoreApi, c: { id: string; image: { id: string } }, map: IdMap | undefined): Promise<string> {
    try {
      // The range's layer of owners over the plain tree (shifted-rootfs.ts); the plain tree alone without a range.
      const plain = await opened.imageRootfs!(c.image.id);
      return map ? `${await opened.imageRootfs!(c.image.id, map)}:${plain}` : plain;
    } catch (error) {
      const kept = await this.deps.overlays?.lowerOf(c.id);
      if (kept !== undefined && kept.split(':').every((dir) => existsSync(dir))) return kept;
      throw error;
    }
  }

  /** The container's root filesystem (its overlay's merged view, or its copy), made or mounted when it is not. */
  async ensure(c: RootfsContainer): Promise<string> {
    const { containersDir, overlays, mapped } = this.deps;
    const map = this.deps.usernsOf(c.spec)?.map;
    const marker = join(containersDir, c.id, 'rootfs.idmap');
    const copy = this.copyOf(c.id);
    if (!overlays || existsSync(copy)) {
      const made = !existsSync(copy);
      if (made) {
        mkdirSync(join(containersDir, c.id), { recursive: true });
        await (await this.deps.store()).materialize(c.image.id, copy, map);
        // Rootless with owners' ranges: the copy's owners moved into its owner's block (userns/rootless-userns.ts).
        if (mapped) await mapped.shiftCopy(copy, mapped.indexOf(c.spec.labels));
      }
      // Rootless with a mapped range, the marker names the owner's block (host ids of container id 1): a copy made for another is refused.
      SandboxUserns.checkRootfs(marker, map ?? mapped?.blockOf(mapped.indexOf(c.spec.labels)), made);
      return copy;
    }
    const opened = await this.deps.store();
    if (!opened.imageRootfs) throw EngineError.unsupported('image roots', 'sandbox');
    mkdirSync(join(containersDir, c.id), { recursive: true });
    SandboxUserns.checkRootfs(marker, map, !(await overlays.exists(c.id)));
    return overlays.mount(c.id, await this.lowerOf(opened, c, map));
  }
}
