import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { extract } from 'tar-stream';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ContainerChange } from '../../../../engine-api/container-operations.js';
import type { LayerEntry } from '../../../images/image-store-types.js';
import type { RootlessUserns } from './rootless-userns.js';

/** The child that reads as the namespace's root (ns-reader-child.ts), compiled beside this file. */
const CHILD = fileURLToPath(new URL('./ns-reader-child.js', import.meta.url));

/** Whether `error` is a read the server's own user was refused (a directory or file of another of the range's ids, not open to it). */
export function isDenied(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EACCES' || code === 'EPERM' || /\bEACCES\b/.test((error as Error | undefined)?.message ?? '');
}

/** `first()`, or when the server's user was refused a read and a namespace reader is there, `again()`. */
export async function retryDenied<T>(first: () => Promise<T>, again: (() => Promise<T>) | undefined): Promise<T> {
  try {
    return await first();
  } catch (error) {
    if (!again || !isDenied(error)) throw error;
    return again();
  }
}

/**
 * A rootless server's reads of a container's copy done inside its mapped user namespace: a
 * container user's 0700 directory belongs to a host id of the range, which the server's user may
 * not open, while the namespace's root (the same user, with its capabilities there) may. The
 * server tries its own read first; on EACCES, `docker commit`, a build's RUN layer and `docker
 * diff` are read again by a node child (ns-reader-child.ts) run there with nsenter, with the same
 * walker (nothing followed). Ids come back as the container sees them (the owner's block moved
 * back). The child is the compiled library's: where it is not (the library run from its
 * TypeScript sources), the first error stands.
 */
export class NamespaceReader {
  private constructor(private readonly ns: RootlessUserns, private readonly node = process.execPath) {}

  /** The reader for `ns`; none when the compiled child is not there (the library run from its sources). */
  static of(ns: RootlessUserns): NamespaceReader | undefined {
    return existsSync(CHILD) ? new NamespaceReader(ns) : undefined;
  }

  /** The layer of `changes` of the copy `rootfs` of a container of block `index`, read in the namespace. */
  async *layer(rootfs: string, changes: readonly ContainerChange[], index: number): AsyncGenerator<LayerEntry> {
    const file = await this.ns.file();
    const child = spawn(this.ns.tools.nsenter, [`--user=${file}`, '--setuid=0', '--setgid=0', '--', this.node, CHILD, 'layer', rootfs, String(this.ns.offsetOf(index)), String(this.ns.size)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => { if (stderr.length < 4096) stderr += c.toString('utf8'); });
    const exited = new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    exited.catch(() => undefined); // awaited below; a failed spawn must not be an unhandled rejection meanwhile
    child.stdin.on('error', () => undefined); // a child that ended early: its status says why
    child.stdin.end(JSON.stringify(changes));
    const entries = extract();
    child.once('error', (error) => entries.destroy(error)); // a failed spawn ends the entries (its stdout may never end)
    child.stdout.pipe(entries);
    try {
      for await (const entry of entries) {
        const { name, type, mode, uid, gid, mtime, linkname, size } = entry.header;
        // A file's content is streamed through, not held: the consumer reads it before asking for the next entry.
        yield { header: { name, type, mode, uid, gid, mtime, size, ...(linkname ? { linkname } : {}) }, ...(type === 'file' ? { content: entry as AsyncIterable<Buffer> } : {}) };
        entry.resume();
      }
      const code = await exited;
      if (code !== 0) throw EngineError.system(`reading the container's changes in the rootless user namespace failed: ${stderr.trim() || `status ${String(code)}`}`);
    } finally {
      child.kill('SIGKILL'); // a consumer that stopped early: the child would wait on its stdout forever
    }
  }

  /** `docker diff` of the copy `container` against the image's tree `image`, for block `index`, read in the namespace. */
  async diff(image: string, container: string, index: number): Promise<ContainerChange[]> {
    const file = await this.ns.file();
    const child = spawn(this.ns.tools.nsenter, [`--user=${file}`, '--setuid=0', '--setgid=0', '--', this.node, CHILD, 'diff', image, container, String(this.ns.offsetOf(index))], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => { if (stderr.length < 4096) stderr += c.toString('utf8'); });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) throw EngineError.system(`reading the container's changes in the rootless user namespace failed: ${stderr.trim() || `status ${String(code)}`}`);
    return JSON.parse(Buffer.concat(out).toString('utf8')) as ContainerChange[];
  }
}
