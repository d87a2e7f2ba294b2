import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extract } from 'tar-stream';
import { EngineError } from '../../engine-api/engine-error.js';
import { familiarImageRef } from '../../engine-api/image-ref.js';

/** The index files an image archive names its images in; anything larger is not one of them. */
const NAME_FILES = new Set(['manifest.json', 'index.json', 'repositories']);
const MAX_NAME_FILE = 4 * 1024 * 1024;

/** An archive kept on disk so the policy can read its names before the runtime loads it. */
export interface HeldArchive {
  /** Every name the archive would tag (familiar form where it parses, as written otherwise). */
  names: string[];
  /** A fresh stream of the archive's bytes, for the runtime. */
  open(): Readable;
  dispose(): Promise<void>;
}

/**
 * Spools `docker load`'s upload to a private temporary file and reads the names it carries
 * (docker-archive `manifest.json` RepoTags, legacy `repositories`, OCI `index.json`
 * annotations). Archives write these index files last, so the whole archive has to arrive
 * before the names are known: the policy runs on them, then the runtime reads the file.
 */
export async function holdArchive(upload: Readable): Promise<HeldArchive> {
  const dir = await mkdtemp(join(tmpdir(), 'dockgate-load-'));
  const file = join(dir, 'archive.tar');
  const dispose = () => rm(dir, { recursive: true, force: true });
  try {
    await pipeline(upload, createWriteStream(file, { mode: 0o600 }));
  } catch {
    await dispose();
    throw EngineError.invalidParameter('the image archive was not received in full');
  }
  let names: string[];
  try {
    names = await archiveNames(createReadStream(file));
  } catch (error) {
    await dispose();
    throw error instanceof EngineError ? error : EngineError.invalidParameter(`invalid tar archive: ${(error as Error).message}`);
  }
  return { names, open: () => createReadStream(file), dispose };
}

async function archiveNames(archive: Readable): Promise<string[]> {
  const ex = extract();
  archive.on('error', (err) => ex.destroy(err));
  archive.pipe(ex as unknown as NodeJS.WritableStream);
  const names = new Set<string>();
  for await (const entry of ex) {
    const name = entry.header.name.replace(/^\.\//, '');
    if (!NAME_FILES.has(name) || entry.header.type !== 'file' || (entry.header.size ?? 0) > MAX_NAME_FILE) {
      entry.resume();
      continue;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of entry as AsyncIterable<Buffer>) chunks.push(chunk);
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      continue; // the runtime's loader answers a malformed index with its own 400
    }
    for (const n of namesIn(name, parsed)) names.add(familiar(n));
  }
  return [...names];
}

function namesIn(file: string, parsed: unknown): string[] {
  const out: string[] = [];
  if (file === 'manifest.json' && Array.isArray(parsed)) {
    for (const entry of parsed) if (Array.isArray(entry?.RepoTags)) out.push(...entry.RepoTags.filter((t: unknown): t is string => typeof t === 'string'));
  } else if (file === 'repositories' && parsed && typeof parsed === 'object') {
    for (const [repo, tags] of Object.entries(parsed)) if (tags && typeof tags === 'object') for (const tag of Object.keys(tags)) out.push(`${repo}:${tag}`);
  } else if (file === 'index.json' && Array.isArray((parsed as { manifests?: unknown })?.manifests)) {
    for (const m of (parsed as { manifests: { annotations?: Record<string, unknown> }[] }).manifests) {
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
