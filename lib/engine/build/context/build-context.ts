import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import { resolveInRoot } from '../../images/store/apply-layer.js';
import { extractContext } from './extract-context.js';
import { Beneath, BeneathError } from '../../linux/beneath.js';
import { byteCap } from '../../images/store/byte-cap.js';
import { decompressedLayer } from '../../images/store/decompress.js';
import { dockerignore, reincludes } from './dockerignore.js';

/**
 * A build's context: the client's tar (plain or gzip) unpacked into a private temporary directory
 * as it streams in (never held in memory), bounded by `maxBytes` uncompressed, with the
 * `.dockerignore` filter. Paths are resolved inside it as a chroot would (no link leads out).
 */
export class BuildContext {
  /** @param walkIgnored the `.dockerignore` re-includes (`!`): walks go on into excluded directories. */
  private constructor(readonly root: string, readonly ignored: (rel: string) => boolean, readonly walkIgnored = false) {}

  /** Spools the context into a new directory under `tempDir`; a broken or too large tar is a 400. */
  static async spool(tar: Readable, tempDir: string, maxBytes: number): Promise<BuildContext> {
    const dir = await mkdtemp(join(tempDir, 'context-'));
    const root = join(dir, 'root');
    try {
      await mkdir(root, { mode: 0o755 });
      const plain = new PassThrough();
      // Both sides settle (an extractor that gives up destroys the pipe, so the reader cannot stall), and
      // the error kept is the one that says what was wrong with the input, not the other side's premature close.
      const failures = (await Promise.allSettled([
        pipeline(await decompressedLayer(tar), byteCap(maxBytes, 'the build context', 'maxBuildContextBytes'), plain),
        extractContext(root, plain).catch((error: unknown) => {
          plain.destroy(error as Error);
          throw error;
        }),
      ])).flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      if (failures.length > 0) throw failures.find((e) => (e as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') ?? failures[0];
      const text = (await readContextFile(root, '.dockerignore'))?.toString('utf8') ?? '';
      return new BuildContext(root, dockerignore(text), reincludes(text));
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      if (error instanceof EngineError) throw EngineError.invalidParameter(`invalid build context: ${error.message.replace(/^invalid layer: /, '')}`);
      // zlib's complaint about a broken gzip stream (Z_DATA_ERROR, Z_BUF_ERROR…) is the client's input too.
      if (/^Z_/.test(String((error as NodeJS.ErrnoException | undefined)?.code))) throw EngineError.invalidParameter(`invalid build context: not a valid gzip stream (${(error as Error).message})`);
      // tar-stream's own complaint (not a tar at all, a truncated one) is the client's input.
      if (error instanceof Error && !('code' in error)) throw EngineError.invalidParameter(`invalid build context: ${error.message}`);
      throw error;
    }
  }

  /** The host path of a context path (relative or absolute inside the context). */
  path(rel: string): Promise<string> {
    return resolveInRoot(this.root, posix.normalize(`/${rel}`).slice(1) || '.');
  }

  /** The Dockerfile's text; missing is dockerd's 400 `Cannot locate specified Dockerfile: X`. */
  async dockerfile(name: string): Promise<string> {
    const text = await readContextFile(this.root, name).catch((error: unknown) => {
      if (error instanceof BeneathError) return undefined;
      throw error;
    });
    if (text === undefined) throw EngineError.invalidParameter(`Cannot locate specified Dockerfile: ${name}`);
    return text.toString('utf8');
  }

  async dispose(): Promise<void> {
    await rm(join(this.root, '..'), { recursive: true, force: true });
  }
}

/** The largest Dockerfile or .dockerignore read (dockerd reads them whole too; this bounds the memory). */
const MAX_CONTROL_FILE = 16 * 1024 * 1024;

/**
 * A file of the context (the Dockerfile, .dockerignore) by its context path: links in it are
 * resolved inside the context as a chroot would (the final name included, as the client meant a
 * symlinked Dockerfile), then the file is read through beneath.ts, so neither a link to a host
 * file nor a FIFO is ever opened. Undefined when missing; a non-regular file is a BeneathError.
 */
async function readContextFile(root: string, name: string): Promise<Buffer | undefined> {
  const top = await Beneath.open(root);
  try {
    return await top.readFile(await top.resolve(name), MAX_CONTROL_FILE);
  } finally {
    await top.close();
  }
}
