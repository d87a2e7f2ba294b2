import { createWriteStream } from 'node:fs';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import { familiarImageRef } from '../../../engine-api/image-ref.js';
import { decompressedLayer } from '../store/decompress.js';
import { SpooledArchive } from './spool-archive.js';

/** An index file larger than this is refused, never skipped: a name it holds would go unjudged. */
const MAX_NAME_FILE = 64 * 1024 * 1024;

/** An archive kept on disk so its names can be judged before another engine loads it. */
export interface HeldArchive {
  /** Every name the archive could tag (familiar form where it parses, as written otherwise). */
  names: string[];
  /** The archive's bytes, once, for the engine that loads it; the file is already unlinked. */
  stream: Readable;
}

/**
 * For a runtime whose loader is another engine (dockerd): spools `docker load`'s upload to a
 * private temporary file and reads every name it could tag, with the member names resolved the
 * way an extraction resolves them (`/manifest.json`, `x/../manifest.json` and an archive link
 * all name `manifest.json`; the last copy wins) and from every index a loader reads: docker-archive
 * `manifest.json` RepoTags, the legacy `repositories` and OCI `index.json` annotations. An index
 * too large to read, or not JSON, is a 400: nothing the loader might read goes unjudged.
 */
export async function holdArchive(upload: Readable): Promise<HeldArchive> {
  const dir = await mkdtemp(join(tmpdir(), 'dockgate-load-'));
  try {
    const file = join(dir, 'archive.tar');
    try {
      await pipeline(upload, createWriteStream(file, { mode: 0o600 }));
    } catch {
      throw EngineError.invalidParameter('the image archive was not received in full');
    }
    const members = join(dir, 'members');
    const handle = await open(file, 'r');
    try {
      const spool = await SpooledArchive.from(await decompressedLayer(handle.createReadStream({ start: 0, autoClose: false })), await mkdtemp(members));
      const names = new Set<string>();
      for (const index of ['manifest.json', 'repositories', 'index.json']) {
        for (const name of namesIn(index, await indexFile(spool, index))) names.add(familiar(name));
      }
      // The file stays open for the engine; its name goes with the directory.
      return { names: [...names], stream: handle.createReadStream({ start: 0 }) };
    } catch (error) {
      await handle.close();
      throw error;
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function indexFile(spool: SpooledArchive, name: string): Promise<unknown> {
  const file = spool.file(name);
  if (file === undefined) return undefined;
  const handle = await open(file, 'r');
  try {
    if ((await handle.stat()).size > MAX_NAME_FILE) throw EngineError.invalidParameter(`invalid image archive: ${name} is larger than ${MAX_NAME_FILE} bytes`);
    return JSON.parse(await readFile(handle, 'utf8'));
  } catch (error) {
    if (error instanceof EngineError) throw error;
    throw EngineError.invalidParameter(`invalid image archive: ${name} is not JSON`);
  } finally {
    await handle.close();
  }
}

function namesIn(file: string, parsed: unknown): string[] {
  const out: string[] = [];
  if (file === 'manifest.json' && Array.isArray(parsed)) {
    for (const entry of parsed) if (Array.isArray(entry?.RepoTags)) out.push(...entry.RepoTags.filter((t: unknown): t is string => typeof t === 'string'));
  } else if (file === 'repositories' && parsed && typeof parsed === 'object') {
    for (const [repo, tags] of Object.entries(parsed)) if (tags && typeof tags === 'object') for (const tag of Object.keys(tags)) out.push(`${repo}:${tag}`);
  } else if (file === 'index.json' && Array.isArray((parsed as { manifests?: unknown })?.manifests)) {
    for (const m of (parsed as { manifests: { annotations?: Record<string, unknown> }[] }).manifests) {
      // As the store's loader: a bare `ref.name` (a tag alone) is what containerd writes beside the full name.
      const name = m?.annotations?.['io.containerd.image.name'] ?? m?.annotations?.['org.opencontainers.image.ref.name'];
      if (typeof name === 'string') out.push(name);
    }
  }
  return out;
}

function familiar(ref: string): string {
  try {
    return familiarImageRef(ref);
  } catch {
    return ref;
  }
}
