import { EventEmitter, once } from 'node:events';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable, Writable } from 'node:stream';

/** What is read or handed on at a time. */
const CHUNK = 1024 * 1024;

/**
 * A layer tar the store is writing (a pull's download, layer-files.ts), readable while it grows:
 * how many bytes are written (complete writes only), whether it is complete, and why it stopped.
 * 'progress' is emitted at each change.
 */
export class GrowingFile extends EventEmitter {
  written = 0;
  complete = false;
  failure: Error | undefined;

  /** `path`: the temporary file being written; `finalPath`: where it is renamed once verified. */
  constructor(readonly path: string, readonly finalPath: string) {
    super();
  }

  /** The writer of the file (created `wx`: the name is the store's new temporary one), counting what it wrote. */
  writer(): Writable {
    let handle: FileHandle | undefined;
    const stop = (err: Error | null) => {
      if (err && !this.failure) this.failure = err;
      this.emit('progress');
    };
    return new Writable({
      highWaterMark: CHUNK,
      construct: (callback) => {
        open(this.path, 'wx').then((h) => { handle = h; callback(); }, callback);
      },
      writev: (chunks, callback) => {
        const buffers = chunks.map((c) => c.chunk as Buffer);
        const total = buffers.reduce((n, b) => n + b.length, 0);
        (handle as FileHandle).writev(buffers).then(({ bytesWritten }) => {
          if (bytesWritten !== total) throw new Error(`short write to the layer file (${bytesWritten} of ${total} bytes)`);
          this.written += bytesWritten;
          this.emit('progress');
          callback();
        }).catch(callback);
      },
      final: (callback) => {
        (handle as FileHandle).close().then(() => {
          handle = undefined;
          this.complete = true;
          this.emit('progress');
          callback();
        }, callback);
      },
      destroy: (err, callback) => {
        stop(err ?? (this.complete ? null : new Error('the layer download did not complete')));
        if (!handle) return callback(err);
        handle.close().then(() => callback(err), () => callback(err));
      },
    });
  }

  /**
   * The file's bytes as they are written, from the start, ending when it is complete and
   * failing when its writing failed. Read from its own descriptor: of the temporary file, or of
   * the renamed one when the writer finished first.
   */
  reader(): Readable {
    let handle: FileHandle | undefined;
    let position = 0;
    const file = this;
    return new Readable({
      highWaterMark: CHUNK,
      read() {
        (async () => {
          for (;;) {
            if (file.failure) throw file.failure;
            // A whole chunk at a time (or the rest, once complete): reading the download's small writes one by one costs more than it saves.
            if (file.written - position >= CHUNK || (file.complete && position < file.written)) {
              // Opened once bytes are written (the writer has made the file by then).
              handle ??= await open(file.path, 'r').catch((err: NodeJS.ErrnoException) => {
                if (err.code === 'ENOENT') return open(file.finalPath, 'r');
                throw err;
              });
              const buffer = Buffer.allocUnsafe(Math.min(CHUNK, file.written - position));
              const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
              if (bytesRead === 0) throw new Error('the layer file is shorter than what was written');
              position += bytesRead;
              this.push(buffer.subarray(0, bytesRead));
              return;
            }
            if (file.complete) {
              this.push(null);
              return;
            }
            await once(file, 'progress');
            if (this.destroyed) return;
          }
        })().catch((err: Error) => this.destroy(err));
      },
      destroy(err, callback) {
        if (!handle) return callback(err);
        handle.close().then(() => callback(err), () => callback(err));
      },
    });
  }
}
