import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { IdShift, NamespaceOwners, OwnerTable, StoredLayer } from '../image-store-types.js';
import { applyLayer } from './apply-layer.js';
import { LayerBlobs } from './layer-blobs.js';
import { layerContentSize } from './layer-content-size.js';
import { byteCap } from './byte-cap.js';
import { tempPathFor } from '../../../fs/atomic-file.js';
import { decompressedLayer } from './decompress.js';
import { digestHex, HashingStream, verifyDigest } from './digest.js';
import { copyTree } from './copy-tree.js';
import { GrowingFile } from './growing-file.js';

/** Where layers (uncompressed tars by diff ID) and unpacked root filesystems (by image ID) live. */
export class LayerFiles {
  /** The compressed blobs known for each layer (layer-blobs.ts), for pushes. */
  readonly blobs: LayerBlobs;

  /** `maxLayerBytes`: what one layer may hold, uncompressed (more fails its import, naming the cap). */
  /** `ownerRange`: the ids an unshifted root may hold ({ uid: 0, gid: 0, size: 1 } for a rootless store); none: any. */
  /** `namespaceOwners`: a rootless store's mapped namespace, which gives each plain root its recorded owners (image-store-types.ts). */
  constructor(readonly layersDir: string, readonly rootfsDir: string, readonly maxLayerBytes = Number.MAX_SAFE_INTEGER, readonly ownerRange?: IdShift, readonly namespaceOwners?: NamespaceOwners) {
    this.blobs = new LayerBlobs(layersDir);
  }

  layerFile(diffId: string): string {
    return join(this.layersDir, `${digestHex(diffId)}.tar`);
  }

  rootfs(imageId: string): string {
    return join(this.rootfsDir, digestHex(imageId));
  }

  /** The stored layer, or undefined when it is not there. */
  async stored(diffId: string): Promise<StoredLayer | undefined> {
    const info = await stat(this.layerFile(diffId)).catch(() => undefined);
    return info ? { diffId, size: info.size } : undefined;
  }

  /**
   * Stores a layer from a stream (gzip or plain tar), hashing while it is written: the
   * uncompressed bytes must hash to `expectedDiffId` when given (else the layer is refused and
   * nothing is kept). `onBytes` sees the uncompressed byte count as it grows. `onFile` (a pull's
   * unpack, stream-unpack.ts) gets the tar as it is written, to read it while it grows.
   */
  async importLayer(source: Readable, expectedDiffId?: string, onBytes?: (bytes: number) => void, onFile?: (file: GrowingFile) => void): Promise<StoredLayer> {
    await mkdir(this.layersDir, { recursive: true });
    const temp = tempPathFor(join(this.layersDir, 'x'));
    const hasher = new HashingStream();
    if (onBytes) hasher.on('data', () => onBytes(hasher.bytes));
    try {
      let sink;
      if (onFile && expectedDiffId !== undefined) {
        const growing = new GrowingFile(temp, this.layerFile(expectedDiffId));
        sink = growing.writer();
        onFile(growing);
      } else sink = createWriteStream(temp);
      await pipeline(await decompressedLayer(source), byteCap(this.maxLayerBytes, 'the layer', 'maxLayerBytes'), hasher, sink);
      const diffId = hasher.digest();
      if (expectedDiffId !== undefined) verifyDigest('layer', expectedDiffId, diffId);
      await rename(temp, this.layerFile(diffId));
      return { diffId, size: hasher.bytes };
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  /** The layer's size as dockerd reports it (its files' bytes, layer-content-size.ts), read once. */
  contentSize(diffId: string): Promise<number> {
    return layerContentSize(this.layerFile(diffId), join(this.layersDir, `${digestHex(diffId)}.size`));
  }

  /** Removes a stored layer (one that failed a later check, or no image uses any more), with its compressed blobs. */
  async discard(diffId: string): Promise<void> {
    await rm(this.layerFile(diffId), { force: true });
    await rm(join(this.layersDir, `${digestHex(diffId)}.size`), { force: true });
    await this.blobs.forget(diffId);
  }

  /** A new empty directory beside the unpacked roots, for a root unpacked elsewhere (a pull's) and then {@link adoptRootfs adopted}. */
  async unpackingRoot(): Promise<string> {
    await mkdir(this.rootfsDir, { recursive: true, mode: 0o700 });
    const temp = await mkdtemp(join(this.rootfsDir, '.tmp-'));
    await chmod(temp, 0o755);
    return temp;
  }

  /**
   * Puts a root unpacked elsewhere (a pull's, stream-unpack.ts, in a temporary directory beside
   * the roots) in place as the image's root; when the image has one already, the new one goes.
   */
  async adoptRootfs(imageId: string, temp: string): Promise<string> {
    const target = this.rootfs(imageId);
    await rename(temp, target).catch(async (err: NodeJS.ErrnoException) => {
      if (!(await stat(target).catch(() => undefined))) throw err;
      await rm(temp, { recursive: true, force: true });
    });
    return target;
  }

  /**
   * Unpacks the layers in order into the image's root filesystem (once: an existing one is kept),
   * in a temporary directory renamed into place, so a crash never leaves half a root.
   */
  async buildRootfs(imageId: string, diffIds: readonly string[], onLayer?: (index: number, read: () => number) => void, base?: { rootfs: string; layers: number }, shifted?: { target: string; shift: IdShift }): Promise<string> {
    const target = shifted?.target ?? this.rootfs(imageId);
    if (await stat(target).catch(() => undefined)) return target;
    const dir = shifted ? dirname(shifted.target) : this.rootfsDir;
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const temp = await mkdtemp(join(dir, '.tmp-'));
    try {
      await chmod(temp, 0o755);
      // A built image's parent is unpacked already: its root (the first `base.layers` layers) is
      // linked file by file (both roots are read-only; applyLayer replaces a file, never writes
      // into it), and only the layers after it applied, instead of every layer again.
      // Under a rootless store's namespace every layer is applied, owners recorded (a parent's
      // files of other owners cannot be linked by the server's user, nor their owners read back).
      const owners = this.namespaceOwners && !shifted ? { table: new Map() as OwnerTable, size: this.namespaceOwners.size } : undefined;
      if (base && !owners) await copyTree(base.rootfs, temp, true);
      for (const [index, diffId] of diffIds.entries()) {
        if (base && !owners && index < base.layers) continue;
        const file = this.layerFile(diffId);
        if (!(await stat(file).catch(() => undefined))) throw EngineError.system(`layer ${diffId} is missing from the image store`);
        const tar = createReadStream(file);
        onLayer?.(index, () => tar.bytesRead);
        await applyLayer(temp, tar, shifted?.shift ?? (owners ? undefined : this.ownerRange), owners);
      }
      if (owners) await this.namespaceOwners!.apply(temp, owners.table);
      await rename(temp, target).catch(async (err: NodeJS.ErrnoException) => {
        // Another pull of the same image finished first: its root is the same content.
        if (!(await stat(target).catch(() => undefined))) throw err;
        await rm(temp, { recursive: true, force: true });
      });
    } catch (err) {
      await rm(temp, { recursive: true, force: true });
      throw err;
    }
    return target;
  }
}
