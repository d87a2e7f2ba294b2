import { EngineError } from '../../../engine-api/engine-error.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type { ImageConfigBlob, ImageRecord } from '../image-store-types.js';

/** `GET /images/json` filters (dockerd daemon/images/images.go acceptedImageFilterTags). */
export const LIST_FILTERS = ['dangling', 'label', 'reference', 'before', 'since', 'until'] as const;
/** `POST /images/prune` filters (dockerd daemon/images/image_prune.go). */
export const PRUNE_FILTERS = ['dangling', 'label', 'label!', 'until'] as const;

/** An image as filters see it. */
export interface FilterSubject {
  record: ImageRecord;
  config: ImageConfigBlob;
}

const values = (filters: EngineFilters, key: string) => [...(filters.get(key) ?? [])];

/** `dangling`'s boolean (dockerd accepts true/false/1/0), undefined when absent. */
export function danglingFilter(filters: EngineFilters): boolean | undefined {
  const given = values(filters, 'dangling');
  if (given.length === 0) return undefined;
  for (const v of given) if (!['true', '1', 'false', '0'].includes(v)) throw EngineError.invalidParameter(`Invalid filter 'dangling=${v}'`);
  return given.some((v) => v === 'true' || v === '1');
}

function labelMatches(labels: Record<string, string>, filter: string): boolean {
  const i = filter.indexOf('=');
  if (i === -1) return Object.hasOwn(labels, filter);
  const key = filter.slice(0, i);
  return Object.hasOwn(labels, key) && labels[key] === filter.slice(i + 1);
}

/** A Go path.Match glob (`*`, `?`; no `/` crossing) over a familiar name with or without its tag. */
function referenceMatches(pattern: string, ref: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|\\[\]]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')}$`);
  const colon = ref.lastIndexOf(':');
  return re.test(ref) || re.test(colon > ref.lastIndexOf('/') ? ref.slice(0, colon) : ref);
}

/** `until`: a Unix timestamp (seconds, fractions allowed) or an RFC 3339 time, in milliseconds. */
function untilMs(value: string): number {
  const ms = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (Number.isNaN(ms)) throw EngineError.invalidParameter(`invalid filter 'until=${value}'`);
  return ms;
}

const createdMs = (s: FilterSubject) => Date.parse(s.config.created ?? '') || 0;

/**
 * Whether an image passes the list or prune filters: `dangling` (no tags), `label` / `label!`,
 * `reference` (glob), `before` / `since` (created before/after another image, which must exist:
 * 404 otherwise) and `until`.
 */
export function imageMatches(subject: FilterSubject, filters: EngineFilters, find: (ref: string) => FilterSubject | undefined): boolean {
  const dangling = danglingFilter(filters);
  if (dangling !== undefined && dangling !== (subject.record.repoTags.length === 0)) return false;
  const labels = subject.config.config?.Labels ?? {};
  if (!values(filters, 'label').every((l) => labelMatches(labels, l))) return false;
  if (values(filters, 'label!').some((l) => labelMatches(labels, l))) return false;
  const references = values(filters, 'reference');
  if (references.length > 0 && !references.some((p) => subject.record.repoTags.some((r) => referenceMatches(p, r)))) return false;
  for (const [key, newer] of [['since', true], ['before', false]] as const) {
    for (const v of values(filters, key)) {
      const other = find(v);
      if (!other) throw EngineError.notFound(`No such image: ${v}`);
      if (newer ? createdMs(subject) <= createdMs(other) : createdMs(subject) >= createdMs(other)) return false;
    }
  }
  return values(filters, 'until').every((v) => createdMs(subject) < untilMs(v));
}
