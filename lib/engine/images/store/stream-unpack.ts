import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { applyLayer } from './apply-layer.js';
import type { LayerFiles } from './layer-files.js';

/**
 * Unpacks a pulled image's layers, in order, into a temporary root while they download (as
 * dockerd does): the layer that is next in order when its download starts is unpacked from the
 * download itself ({@link claim} gives the tee to put in its stream); a layer whose download
 * started while an earlier one was still unpacking is unpacked from its stored tar once it is
 * stored ({@link stored}) and its turn comes. Every layer goes through applyLayer (nothing
 * followed). Nothing is recorded here: the pull hands {@link root} to the store's commit only
 * after every digest was verified, and {@link discard} removes it on any failure.
 */
export class StreamingUnpack {
  #next = 0;
  #busy = false;
  #failure: Error | undefined;
  #current: Promise<unknown> = Promise.resolve();
  #sink: PassThrough | undefined;
  readonly #ready = new Set<number>();
  readonly #finished: Promise<void>;
  #settle!: { resolve: () => void; reject: (err: Error) => void };

  private constructor(
    private readonly files: LayerFiles,
    private readonly diffIds: readonly string[],
    /** The temporary root the layers are applied into. */
    readonly root: string,
    private readonly onStart: (index: number, streamed: boolean) => void,
    private readonly onApplied: (index: number) => void,
  ) {
    this.#finished = new Promise<void>((resolve, reject) => (this.#settle = { resolve, reject }));
    this.#finished.catch(() => undefined);
    if (diffIds.length === 0) this.#settle.resolve();
  }

  /** A temporary root beside the store's unpacked roots (the same filesystem, so the commit renames it into place). */
  static async start(files: LayerFiles, diffIds: readonly string[], onStart: (index: number, streamed: boolean) => void, onApplied: (index: number) => void): Promise<StreamingUnpack> {
    await mkdir(files.rootfsDir, { recursive: true, mode: 0o700 });
    const root = await mkdtemp(join(files.rootfsDir, '.tmp-'));
    await chmod(root, 0o755);
    return new StreamingUnpack(files, diffIds, root, onStart, onApplied);
  }

  /**
   * The tee to put in layer `index`'s uncompressed stream when it is next in order and nothing
   * is unpacking: it passes the bytes on (to the stored tar) and into applyLayer, holding the
   * stream while the unpack is behind. An unpack failure fails the stream with its error; a
   * stream that ends early fails the unpack. Undefined when the layer must wait its turn.
   */
  claim(index: number): Transform | undefined {
    if (this.#busy || this.#failure || this.#next !== index) return undefined;
    const sink = new PassThrough();
    this.#sink = sink;
    const failure = () => this.#failure ?? new Error('the layer could not be unpacked');
    const tee = new Transform({
      transform(chunk: Buffer, _enc, callback: TransformCallback) {
        if (sink.destroyed) return callback(failure());
        if (sink.write(chunk)) return callback(null, chunk);
        const go = () => {
          sink.off('drain', go);
          sink.off('close', go);
          if (sink.destroyed) callback(failure());
          else callback(null, chunk);
        };
        sink.on('drain', go);
        sink.on('close', go);
      },
      flush(callback) {
        sink.end();
        callback();
      },
    });
    tee.once('close', () => {
      if (!tee.writableFinished && !sink.destroyed) sink.destroy(new Error('the layer download did not complete'));
    });
    this.#run(index, sink, true);
    return tee;
  }

  /** Layer `index` is stored (and verified): unpacked from its tar when it was not streamed. */
  stored(index: number): void {
    this.#ready.add(index);
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
    await rm(this.root, { recursive: true, force: true });
  }

  #pump(): void {
    if (this.#busy || this.#failure || this.#next >= this.diffIds.length || !this.#ready.has(this.#next)) return;
    const index = this.#next;
    this.#run(index, createReadStream(this.files.layerFile(this.diffIds[index] as string)), false);
  }

  #run(index: number, tar: Readable, streamed: boolean): void {
    this.#busy = true;
    this.onStart(index, streamed);
    this.#current = applyLayer(this.root, tar, this.files.ownerRange).then(() => {
      if (this.#failure) return;
      this.#busy = false;
      this.#sink = undefined;
      this.#next = index + 1;
      this.onApplied(index);
      if (this.#next === this.diffIds.length) this.#settle.resolve();
      else this.#pump();
    }, (err: Error) => this.#fail(err));
  }

  #fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    // The download feeding the unpack stops with the unpack's error (its tee sees the sink gone).
    if (this.#sink && !this.#sink.destroyed) this.#sink.destroy(err);
    this.#settle.reject(err);
  }
}
