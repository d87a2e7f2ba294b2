import { nameFilter } from '../../../../engine-api/name-pattern.js';
import type { EngineFilters } from '../../../../engine-api/filters.js';
import { labelMatches } from '../../local/label-filter.js';
import { parseUntil } from '../../local/until-filter.js';
import type { NetworkRecord } from './network-records.js';

/** What the filters need to know of a network beyond its record. */
export interface NetworkUse {
  /** Running containers are plugged into it. */
  inUse: (net: NetworkRecord) => boolean;
  /** It is a predefined network (the default bridge): `type=builtin`, never dangling. */
  builtin: (net: NetworkRecord) => boolean;
}

/** `GET /networks` filters: name, id (prefix), driver, type, scope, label, label!, dangling. */
export function listFilter(filters: EngineFilters, use: NetworkUse): (net: NetworkRecord) => boolean {
  const named = nameFilter(filters);
  const test = (key: string, ok: (v: string) => boolean): boolean => {
    const values = filters.get(key);
    return !values || values.size === 0 || [...values].some(ok);
  };
  return (net) => {
    if (!named(net.name)) return false;
    const inUse = use.inUse(net);
    const builtin = use.builtin(net);
    return test('id', (v) => net.id.startsWith(v)) && test('driver', (v) => v === 'bridge') &&
      test('type', (v) => v === (builtin ? 'builtin' : 'custom')) && test('scope', (v) => v === 'local') && labelsMatch(net.labels, filters) &&
      // A predefined network is never dangling (dockerd's filterNetworkByUse).
      test('dangling', (v) => ((v === 'true' || v === '1') ? !inUse && !builtin : inUse || builtin));
  };
}

/** `POST /networks/prune` filters: label, label!, until (the networks created before it). Networks in use are the caller's to keep. */
export function pruneFilter(filters: EngineFilters): (net: NetworkRecord) => boolean {
  const until = [...(filters.get('until') ?? [])].map((v) => parseUntil(v));
  return (net) => labelsMatch(net.labels, filters) && !until.some((t) => Date.parse(net.created) >= t);
}

function labelsMatch(labels: Record<string, string>, filters: EngineFilters): boolean {
  const values = filters.get('label');
  const without = filters.get('label!');
  return (!values || [...values].every((v) => labelMatches(labels, v))) && (!without || ![...without].some((v) => labelMatches(labels, v)));
}
