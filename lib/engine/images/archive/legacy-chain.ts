import { readFile } from 'node:fs/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { SpooledArchive } from './spool-archive.js';

const bad = (why: string) => EngineError.invalidParameter(`invalid image archive: ${why}`);
const V1_ID = /^[0-9a-f]{64}$/;

/** moby's layer store refuses a layer whose parent is this deep (layer/layer_store.go maxLayerDepth). */
export const MAX_LAYER_DEPTH = 125;

/** One v1 layer's `json`, parsed, with the v1 id of its parent. */
export interface LegacyLayer {
  image: Record<string, unknown>;
  parent?: string;
}

async function readLayer(spool: SpooledArchive, v1: string): Promise<LegacyLayer> {
  const jsonFile = spool.file(`${v1}/json`);
  if (!jsonFile) throw bad(`${v1}/json is missing`);
  let image: unknown;
  try {
    image = JSON.parse(await readFile(jsonFile, 'utf8'));
  } catch {
    throw bad(`${v1}/json is not JSON`);
  }
  if (typeof image !== 'object' || image === null || Array.isArray(image)) throw bad(`${v1}/json is not an object`);
  const parentId = (image as Record<string, unknown>).parent;
  if (parentId !== undefined && parentId !== '' && (typeof parentId !== 'string' || !V1_ID.test(parentId))) throw bad(`${v1}/json names a parent that is not a layer id`);
  if (!spool.file(`${v1}/layer.tar`)) throw bad(`${v1}/layer.tar is missing`);
  return { image: image as Record<string, unknown>, ...(typeof parentId === 'string' && parentId !== '' ? { parent: parentId } : {}) };
}

/**
 * Every layer the `tops` build on, read before any layer is written: each `json` parsed and its
 * parent checked, a layer that is its own ancestor refused, and a chain deeper than dockerd's
 * 125 layers refused as dockerd refuses it ("max depth exceeded"), since each v1 layer becomes an
 * image whose config repeats its every ancestor's (cost grows with the square of the depth).
 */
export async function legacyLayers(spool: SpooledArchive, tops: readonly string[]): Promise<Map<string, LegacyLayer>> {
  const layers = new Map<string, LegacyLayer>();
  const depth = new Map<string, number>();
  for (const top of tops) {
    const chain: string[] = [];
    const onChain = new Set<string>();
    let v1: string | undefined = top;
    while (v1 !== undefined && !depth.has(v1)) {
      if (onChain.has(v1)) throw bad(`layer ${v1} is its own ancestor`);
      onChain.add(v1);
      chain.push(v1);
      // A chain is refused once it passes the cap, before more of it is read.
      if (chain.length > MAX_LAYER_DEPTH) throw bad(`layer ${top}: max depth exceeded (a parent chain deeper than ${MAX_LAYER_DEPTH} layers)`);
      const layer: LegacyLayer = layers.get(v1) ?? (await readLayer(spool, v1));
      layers.set(v1, layer);
      v1 = layer.parent;
    }
    let below = v1 === undefined ? 0 : depth.get(v1)!;
    for (const id of chain.reverse()) {
      below += 1;
      if (below > MAX_LAYER_DEPTH) throw bad(`layer ${top}: max depth exceeded (a parent chain deeper than ${MAX_LAYER_DEPTH} layers)`);
      depth.set(id, below);
    }
  }
  return layers;
}
