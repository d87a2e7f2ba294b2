import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pack, type Header } from 'tar-stream';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ImageStoreCore } from '../store-core.js';
import type { ImageRecord } from '../image-store-types.js';
import { digestHex } from '../store/digest.js';
import { normalizeRef, repositoryOf, tagOf } from '../store/references.js';

const EPOCH = new Date(0);

interface SaveEntry {
  record: ImageRecord;
  repoTags: string[];
}

/** The images `docker save` names, merged per image; a tag reference keeps that tag, an ID none. */
function entriesFor(store: ImageStoreCore, refs: string[]): SaveEntry[] {
  if (refs.length === 0) throw EngineError.invalidParameter('no images to save');
  const byId = new Map<string, SaveEntry>();
  for (const ref of refs) {
    const record = store.recordOrThrow(ref);
    const entry = byId.get(record.id) ?? { record, repoTags: [] };
    byId.set(record.id, entry);
    let named: string | undefined;
    try {
      named = normalizeRef(ref);
    } catch {
      named = undefined;
    }
    if (named && record.repoTags.includes(named) && !entry.repoTags.includes(named)) entry.repoTags.push(named);
  }
  return [...byId.values()];
}

/**
 * `docker save`: a docker-archive tar (what `docker load` of every Docker version reads):
 * `<diffhex>/layer.tar` per layer (each once), `<idhex>.json` configs, `manifest.json`
 * (`[{Config, RepoTags, Layers}]`) and the legacy `repositories` file. Layers stream from the
 * store into the tar; nothing is buffered whole. Unknown names fail before any byte is sent.
 */
export async function saveArchive(store: ImageStoreCore, refs: string[], signal?: AbortSignal): Promise<Readable> {
  const entries = entriesFor(store, refs);
  const configs = await Promise.all(entries.map((e) => store.config(e.record.id)));
  const archive = pack();
  const add = (header: Partial<Header> & { name: string }, body?: Buffer) => new Promise<void>((resolve, reject) => {
    const h = Object.assign({ mode: 0o644, mtime: EPOCH, uid: 0, gid: 0, type: 'file' }, header) as Header;
    const done = (err?: Error | null) => (err ? reject(err) : resolve());
    if (body) archive.entry(h, body, done);
    else archive.entry(h, done);
  });
  const addFile = (name: string, path: string, size: number) => new Promise<void>((resolve, reject) => {
    const sink = archive.entry({ name, size, mode: 0o644, mtime: EPOCH, type: 'file' }, (err) => (err ? reject(err) : resolve()));
    const source = createReadStream(path);
    source.on('error', (err) => {
      sink.destroy(err);
      reject(err);
    });
    // The entry's sink takes the file with back-pressure: the tar is produced as it is read.
    source.pipe(sink as unknown as NodeJS.WritableStream);
  });
  const write = async () => {
    const written = new Set<string>();
    const manifest: Record<string, unknown>[] = [];
    const repositories: Record<string, Record<string, string>> = {};
    for (const [i, { record, repoTags }] of entries.entries()) {
      const layerNames: string[] = [];
      for (const diffId of (configs[i] as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids) {
        const name = `${digestHex(diffId)}/layer.tar`;
        layerNames.push(name);
        if (written.has(name)) continue;
        written.add(name);
        const stored = await store.files.stored(diffId);
        if (!stored) throw EngineError.system(`layer ${diffId} is missing from the image store`);
        await add({ name: `${digestHex(diffId)}/`, type: 'directory', mode: 0o755 });
        await addFile(name, store.files.layerFile(diffId), stored.size);
      }
      const configName = `${digestHex(record.id)}.json`;
      await addFile(configName, store.blobFile(record.id), (await stat(store.blobFile(record.id))).size);
      manifest.push({ Config: configName, RepoTags: repoTags.length > 0 ? repoTags : null, Layers: layerNames });
      const top = layerNames[layerNames.length - 1]?.split('/')[0];
      for (const tag of repoTags) {
        if (!top) continue;
        (repositories[repositoryOf(tag)] ??= {})[tagOf(tag) as string] = top;
      }
    }
    await add({ name: 'manifest.json' }, Buffer.from(JSON.stringify(manifest)));
    if (Object.keys(repositories).length > 0) await add({ name: 'repositories' }, Buffer.from(JSON.stringify(repositories)));
    archive.finalize();
  };
  write().catch((err: Error) => archive.destroy(err));
  const out = Readable.from(archive as unknown as AsyncIterable<Buffer>, { objectMode: false });
  signal?.addEventListener('abort', () => out.destroy(), { once: true });
  return out;
}
