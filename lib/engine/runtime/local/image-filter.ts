import { EngineError } from '../../../engine-api/engine-error.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import { labelMatches } from './label-filter.js';
import type { LocalImage } from './local-container.js';

/** `GET /images/json` filters dockerd accepts. */
export const IMAGE_LIST_FILTERS = ['dangling', 'label', 'reference', 'before', 'since', 'until'] as const;

/**
 * Whether an image with these references passes `GET /images/json`'s filters. `reference` is a
 * glob over the familiar name, with or without its tag (dockerd uses Go's path.Match);
 * `before`/`since` name another image and compare creation times.
 */
export function imageMatches(
  image: LocalImage,
  refs: string[],
  filters: EngineFilters,
  find: (ref: string) => LocalImage | undefined,
  startedAt: Date,
): boolean {
  const values = (key: string): string[] => [...(filters.get(key) ?? [])];
  const created = (i: LocalImage): number => (i.created ?? startedAt).getTime();
  for (const v of values('dangling')) {
    if (!['true', '1', 'false', '0'].includes(v)) throw EngineError.invalidParameter(`Invalid filter 'dangling=${v}'`);
    // Every local image has a reference: none is dangling.
    if (v === 'true' || v === '1') return false;
  }
  const labels = values('label');
  if (labels.length > 0 && !labels.every((l) => labelMatches(image.labels ?? {}, l))) return false;
  const references = values('reference');
  if (references.length > 0 && !references.some((pattern) => refs.some((r) => globMatches(pattern, r)))) return false;
  for (const [key, newer] of [['since', true], ['before', false]] as const) {
    for (const v of values(key)) {
      const other = find(v);
      if (!other) throw EngineError.notFound(`No such image: ${v}`);
      if (newer ? created(image) <= created(other) : created(image) >= created(other)) return false;
    }
  }
  for (const v of values('until')) {
    const limit = /^\d+(\.\d+)?$/.test(v) ? Number(v) * 1000 : Date.parse(v);
    if (Number.isNaN(limit)) throw EngineError.invalidParameter(`invalid filter 'until=${v}'`);
    if (created(image) >= limit) return false;
  }
  return true;
}

/** Go's path.Match over `name:tag` and over the bare name (`busybox*`, `busybox:1.*`). */
function globMatches(pattern: string, ref: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
  const colon = ref.lastIndexOf(':');
  const name = colon > ref.lastIndexOf('/') ? ref.slice(0, colon) : ref;
  return re.test(ref) || re.test(name);
}
