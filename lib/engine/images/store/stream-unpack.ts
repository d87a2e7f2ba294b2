import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { applyLayer } from './apply-layer.js';
import type { GrowingFile } from './growing-file.js';
import type { LayerFiles } from './layer-files.js';
import type { OwnerTable } from '../image-store-types.js';

/**
 * Unpacks a pulled image's layers, in order, into a temporary root while they download (as
 * dockerd does): each layer's tar is read while the download writes it ({@link watch}), from
 * the moment its turn comes (the layers before it unpacked), so downloads never wait for the
 * unpack and the unpack of the last layer ends soon after its download. Every layer goes
 * through applyLayer (nothing followed). Nothing is recorded here: the pull hands {@link root}
 * to the store's commit only after every digest was verified, and {@link discard} removes it on
 * any failure.
 */
export class StreamingUnpack {
  #next = 0;
  #busy = false;
  #failure: Error | undefined;
  #current: Promise<unknown> = Promise.resolve();
  #reading: Readable | undefined;
  readonly #growing = new Map<number, GrowingFile>();
  readonly #stored = new Set<number>();
  readonly #finished: Promise<void>;
  #settle!: { resolve: () => void; reject: (err: Error) => void };
  /** Under a rootless store's namespace: the owners the layers give, applied once the last one is (layer-files.ts). */
  readonly #owners: { table: OwnerTable; size: number } | undefined;

  private constructor(
    private readonly files: LayerFiles,
    private readonly diffIds: readonly string[],
    /** The temporary root the layers are applied into. */
    readonly root: string,
    private readonly onStart: (index: number) => void,
    private readonly onApplied: (index: number) => void,
  ) {
    const ns = files.namespaceOwners;
    this.#owners = ns ? { table: new Map(), size: ns.size } : undefined;
    this.#finished = new Promise<void>((resolve, reject) => (this.#settle = { resolve, reject }));
    this.#finished.catch(() => undefined);
    if (diffIds.length === 0) this.#settle.resolve();
  }

  /** A temporary root beside the store's unpacked roots (the same filesystem, so the commit renames it into place). */
  static async start(files: LayerFiles, diffIds: readonly string[], onStart: (index: number) => void, onApplied: (index: number) => void): Promise<StreamingUnpack> {
    return new StreamingUnpack(files, diffIds, await files.unpackingRoot(), onStart, onApplied);
  }

  /** What to give importLayer for layer `index`: its tar as it is written. */
  watch(index: number): (file: GrowingFile) => void {
    return (file) => {
      this.#growing.set(index, file);
      this.#pump();
    };
  }

  /** Layer `index` is stored (and verified). */
  stored(index: number): void {
    this.#stored.add(index);
    this.#pump();
  }

  /** Resolves once every layer is unpacked; rejects with the first unpack failure. */
  finished(): Promise<void> {
    return this.#finished;
  }

  /** Stops unpacking and removes the temporary root (a failed pull keeps nothing). */
  async discard(): Promise<void> {
    this.#fail(new Error('the pull failed'));
    await this.#current.catch(() => undefined);
    // Its owners may have been given in a rootless store's namespace already: removed there first.
    await this.files.namespaceOwners?.run(['rm', '-rf', '--', this.root]).catch(() => undefined);
    await rm(this.root, { recursive: true, force: true });
  }

  #pump(): void {
    if (this.#busy || this.#failure || this.#next >= this.diffIds.length) return;
    const index = this.#next;
    const growing = this.#growing.get(index);
    let tar: Readable;
    if (growing) tar = growing.reader();
    else if (this.#stored.has(index)) tar = createReadStream(this.files.layerFile(this.diffIds[index] as string));
    else return;
    this.#busy = true;
    this.#reading = tar;
    this.onStart(index);
    const owners = this.#owners;
    this.#current = applyLayer(this.root, tar, owners ? undefined : this.files.ownerRange, owners)
      .then(() => (owners && index === this.diffIds.length - 1 ? this.files.namespaceOwners!.apply(this.root, owners.table) : undefined)).then(() => {
      if (this.#failure) return;
      this.#busy = false;
      this.#reading = undefined;
      this.#growing.delete(index);
      this.#next = index + 1;
      this.onApplied(index);
      if (this.#next === this.diffIds.length) this.#settle.resolve();
      else this.#pump();
    }, (err: Error) => this.#fail(err));
  }

  #fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    if (this.#reading && !this.#reading.destroyed) this.#reading.destroy(err);
    this.#settle.reject(err);
  }
}
