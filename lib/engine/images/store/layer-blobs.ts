import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { createGzip } from 'node:zlib';
import { writeFileAtomic, tempPathFor } from '../../../fs/atomic-file.js';
import { digestHex, HashingStream, isSha256Digest } from './digest.js';

/** A registry blob known to hold one layer: its compressed form's descriptor, and where it is. */
export interface LayerBlob {
  /** `sha256:…` of the blob as a registry stores it (compressed). */
  digest: string;
  size: number;
  /** The layer media type it was pulled or pushed as (`…rootfs.diff.tar.gzip`, `…layer.v1.tar+gzip`). */
  mediaType: string;
  /** Repositories (`host/path`, e.g. `127.0.0.1:5000/alice/x`) known to hold it: a push checks them first and mounts from them. */
  repositories: string[];
}

/** The pseudo-repository marking the store's own gzip blob among the known ones (never a registry's: it has no host). */
export const OWN = 'dockgate:own';

/** The gzip layer type dockerd pushes (Docker image manifest v2, schema 2). */
const DOCKER_GZIP_LAYER = 'application/vnd.docker.image.rootfs.diff.tar.gzip';

/**
 * What a push needs to know about a layer besides its uncompressed tar (dockerd keeps the same in
 * its distribution metadata, `v2metadata-by-diffid`): the compressed blobs a registry holds for
 * it and where, and the compressed blob this store made itself. Beside each stored layer
 * `<diffhex>.tar` in the layers directory:
 *
 * - `<diffhex>.blobs.json`: the {@link LayerBlob}s known for it (pulled as, pushed as);
 * - `<diffhex>.tar.gz`: the store's own gzip of the tar, made once when a layer is first pushed
 *   without a blob of its own (the busybox seed, a loaded or built layer) and kept, so the next
 *   push sends the same digest. Node's gzip writes no name and no time into its header: the same
 *   tar gives the same bytes.
 *
 * The files go with the layer ({@link forget}).
 */
export class LayerBlobs {
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly layersDir: string) {}

  private record(diffId: string): string {
    return join(this.layersDir, `${digestHex(diffId)}.blobs.json`);
  }

  /** The store's own compressed blob of a layer (it may not exist yet). */
  gzipFile(diffId: string): string {
    return join(this.layersDir, `${digestHex(diffId)}.tar.gz`);
  }

  /** The blobs known for a layer, most recently learnt first. */
  async known(diffId: string): Promise<LayerBlob[]> {
    const text = await readFile(this.record(diffId), 'utf8').catch(() => '[]');
    try {
      const parsed = JSON.parse(text) as unknown;
      return Array.isArray(parsed) ? (parsed as LayerBlob[]).filter((b) => b && isSha256Digest(b.digest) && Array.isArray(b.repositories)) : [];
    } catch {
      return [];
    }
  }

  /** Records that `repository` holds `blob` for the layer (after a pull of it, or a push). */
  remember(diffId: string, blob: Omit<LayerBlob, 'repositories'>, repository?: string): Promise<void> {
    const run = this.#queue.then(async () => {
      const known = await this.known(diffId);
      const same = known.find((b) => b.digest === blob.digest);
      const entry = same ?? { ...blob, repositories: [] };
      if (repository !== undefined) entry.repositories = [repository, ...entry.repositories.filter((r) => r !== repository)].slice(0, 16);
      await writeFileAtomic(this.record(diffId), JSON.stringify([entry, ...known.filter((b) => b !== same)].slice(0, 8)));
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** The store's own gzip blob of the layer, when it has made one. */
  async ownBlob(diffId: string): Promise<(Omit<LayerBlob, 'repositories'> & { file: string }) | undefined> {
    const file = this.gzipFile(diffId);
    const info = await stat(file).catch(() => undefined);
    if (!info) return undefined;
    const own = (await this.known(diffId)).find((b) => b.mediaType === DOCKER_GZIP_LAYER && b.size === info.size && b.repositories.includes(OWN));
    return own ? { digest: own.digest, size: own.size, mediaType: own.mediaType, file } : undefined;
  }

  /**
   * Compresses the layer tar into its kept gzip blob while the returned stream (the compressed
   * bytes) is read, e.g. by an upload: one pass, never buffered. `onRead` sees the uncompressed
   * bytes read so far. `done` resolves with the blob once the stream ended and the file is in
   * place (and rejects, keeping nothing, when anything failed).
   */
  compress(diffId: string, layerFile: string, onRead: (bytes: number) => void): { stream: Readable; done: Promise<Omit<LayerBlob, 'repositories'>> } {
    const target = this.gzipFile(diffId);
    const temp = tempPathFor(target);
    const source = createReadStream(layerFile);
    const hasher = new HashingStream();
    const file = createWriteStream(temp, { flags: 'wx' });
    const copy = new Transform({
      transform(chunk: Buffer, _enc, callback: TransformCallback) {
        // The file is written first (its back-pressure holds the stream), then the chunk passed on.
        if (file.write(chunk)) callback(null, chunk);
        else file.once('drain', () => callback(null, chunk));
      },
      flush(callback) {
        file.end(callback);
      },
    });
    let read = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, callback: TransformCallback) {
        read += chunk.length;
        onRead(read);
        callback(null, chunk);
      },
    });
    const gzip = createGzip();
    const fail = (err: Error) => {
      for (const s of [source, meter, gzip, hasher, copy]) if (!s.destroyed) s.destroy(err);
    };
    for (const s of [source, meter, gzip, hasher, file] as NodeJS.EventEmitter[]) s.once('error', fail);
    const stream = source.pipe(meter).pipe(gzip).pipe(hasher).pipe(copy);
    const done = new Promise<Omit<LayerBlob, 'repositories'>>((resolve, reject) => {
      copy.once('error', reject);
      copy.once('close', () => {
        if (!copy.readableEnded) reject(new Error('the layer was not compressed to its end'));
      });
      copy.once('end', () => {
        const blob = { digest: hasher.digest(), size: hasher.bytes, mediaType: DOCKER_GZIP_LAYER };
        const finish = () => rename(temp, target).then(() => this.remember(diffId, blob, OWN)).then(() => resolve(blob), reject);
        if (file.writableFinished) void finish();
        else file.once('finish', () => void finish());
      });
    }).catch(async (err: unknown) => {
      await rm(temp, { force: true });
      throw err;
    });
    done.catch(() => undefined);
    return { stream, done };
  }

  /** Drops what is known about a layer the store no longer has. */
  async forget(diffId: string): Promise<void> {
    await rm(this.record(diffId), { force: true });
    await rm(this.gzipFile(diffId), { force: true });
  }
}

