import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import { resolveInRoot } from '../../images/store/apply-layer.js';
import { extractContext } from './extract-context.js';
import { byteCap } from '../../images/store/byte-cap.js';
import { decompressedLayer } from '../../images/store/decompress.js';
import { dockerignore } from './dockerignore.js';

/**
 * A build's context: the client's tar (plain or gzip) unpacked into a private temporary directory
 * as it streams in (never held in memory), bounded by `maxBytes` uncompressed, with the
 * `.dockerignore` filter. Paths are resolved inside it as a chroot would (no link leads out).
 */
export class BuildContext {
  private constructor(readonly root: string, readonly ignored: (rel: string) => boolean) {}

  /** Spools the context into a new directory under `tempDir`; a broken or too large tar is a 400. */
  static async spool(tar: Readable, tempDir: string, maxBytes: number): Promise<BuildContext> {
    const dir = await mkdtemp(join(tempDir, 'context-'));
    const root = join(dir, 'root');
    try {
      await mkdir(root, { mode: 0o755 });
      const plain = new PassThrough();
      await Promise.all([
        pipeline(await decompressedLayer(tar), byteCap(maxBytes, 'the build context', 'maxBuildContextBytes'), plain),
        extractContext(root, plain),
      ]);
      const text = await readFile(join(root, '.dockerignore'), 'utf8').catch(() => '');
      return new BuildContext(root, dockerignore(text));
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      if (error instanceof EngineError) throw EngineError.invalidParameter(`invalid build context: ${error.message.replace(/^invalid layer: /, '')}`);
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
    const path = await this.path(name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) throw EngineError.invalidParameter(`Cannot locate specified Dockerfile: ${name}`);
    return readFile(path, 'utf8');
  }

  async dispose(): Promise<void> {
    await rm(join(this.root, '..'), { recursive: true, force: true });
  }
}
