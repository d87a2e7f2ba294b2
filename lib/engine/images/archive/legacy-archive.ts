import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LoadNameCheck } from '../../../engine-api/image-operations.js';
import type { ImageStoreCore } from '../store-core.js';
import type { StoredLayer } from '../image-store-types.js';
import { normalizeRef } from '../store/references.js';
import { goJson, v1Config } from './v1-config.js';
import { legacyLayers } from './legacy-chain.js';
import type { SpooledArchive } from './spool-archive.js';

const bad = (why: string) => EngineError.invalidParameter(`invalid image archive: ${why}`);
const V1_ID = /^[0-9a-f]{64}$/;

/** One v1 layer loaded: the image made of it and its ancestors, and what its children build on. */
interface Loaded {
  id: string;
  config: Buffer;
  layers: StoredLayer[];
  history: Record<string, unknown>[];
  parent?: string;
}

/**
 * The `repositories` file of a pre-1.10 `docker save` (`{"repo": {"tag": "<v1 id>"}}`): each
 * `name:tag` with the v1 id of its topmost layer. Ids are 64 hex characters (they name the
 * archive's folders), names are checked as any load's.
 */
async function repositories(spool: SpooledArchive): Promise<{ tag: string; v1: string }[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(spool.file('repositories')!, 'utf8'));
  } catch {
    throw bad('repositories is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw bad('repositories is not an object');
  const out: { tag: string; v1: string }[] = [];
  for (const [repo, tags] of Object.entries(parsed)) {
    if (typeof tags !== 'object' || tags === null || Array.isArray(tags)) throw bad(`repositories entry ${repo} is not an object`);
    for (const [tag, v1] of Object.entries(tags as Record<string, unknown>)) {
      if (typeof v1 !== 'string' || !V1_ID.test(v1)) throw bad(`repositories entry ${repo}:${tag} does not name a layer id`);
      try {
        out.push({ tag: normalizeRef(`${repo}:${tag}`), v1 });
      } catch {
        throw bad(`invalid repositories entry ${repo}:${tag}`);
      }
    }
  }
  return out;
}

/**
 * `docker load` of the format `docker save` wrote before Docker 1.10 (dockerode's test-load.tar):
 * `repositories`, and per layer `<id>/json` (a v1 image: its config and its `parent`) and
 * `<id>/layer.tar`. As dockerd 20.10's legacy loader (moby image/tarexport/load.go): each layer,
 * parents first, becomes an image whose config is the v1 JSON made a v2 config (v1-config.ts),
 * with the layers so far and a history entry per layer; each tag then names its topmost image.
 * The archive's files are the spooled ones (spool-archive.ts), read by member name: nothing of
 * the archive is followed on the host. Answers dockerd's lines: none but a moved tag's note.
 */
export async function loadLegacyArchive(store: ImageStoreCore, spool: SpooledArchive, checkNames?: LoadNameCheck): Promise<string[]> {
  const wanted = await repositories(spool);
  await checkNames?.([...new Set(wanted.map((w) => w.tag))]);
  const read = await legacyLayers(spool, wanted.map((w) => w.v1));
  const loaded = new Map<string, Loaded>();

  const load = async (v1: string): Promise<Loaded> => {
    const done = loaded.get(v1);
    if (done) return done;
    const { image, parent: parentId } = read.get(v1)!;
    const parent = parentId !== undefined ? await load(parentId) : undefined;
    const layerFile = spool.file(`${v1}/layer.tar`);
    if (!layerFile) throw bad(`${v1}/layer.tar is missing`);
    const layer = await store.files.importLayer(createReadStream(layerFile));
    const layers = [...(parent?.layers ?? []), layer];
    const v2 = v1Config(image, layers.map((l) => l.diffId), parent?.history ?? []);
    const config = Buffer.from(goJson(v2.config));
    const { id } = await store.commit({ config, layers, tags: [], ...(parent ? { parent: parent.id } : {}) });
    const made = { id, config, layers, history: v2.history, ...(parent ? { parent: parent.id } : {}) };
    loaded.set(v1, made);
    return made;
  };

  const lines: string[] = [];
  for (const { tag, v1 } of wanted) {
    const { config, layers, parent } = await load(v1);
    // The image is there already: committing it again with the tag names it.
    const { moved } = await store.commit({ config, layers, tags: [tag], ...(parent ? { parent } : {}) });
    for (const { ref, from } of moved) lines.push(`The image ${ref} already exists, renaming the old one with ID ${from} to empty string\n`);
  }
  return lines;
}
