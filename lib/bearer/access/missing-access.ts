import type { AccessEntry, ResourceScope } from '../../scope/index.js';

/** One required (type, name, action) triple. */
export interface AccessRecord {
  type: string;
  class?: string;
  name: string;
  action: string;
}

/**
 * Expands scopes into one record per action, as the registry lists them in an error's `detail`.
 *
 * @example
 * accessRecords([{ type: 'repository', name: 'a/b', actions: ['pull', 'push'] }])
 * // → [{ type: 'repository', name: 'a/b', action: 'pull' }, { type: 'repository', name: 'a/b', action: 'push' }]
 */
export function accessRecords(scopes: readonly ResourceScope[]): AccessRecord[] {
  const records: AccessRecord[] = [];
  for (const scope of scopes) {
    for (const action of scope.actions) {
      records.push({ type: scope.type, ...(scope.class ? { class: scope.class } : {}), name: scope.name, action });
    }
  }
  return records;
}

/**
 * The required actions the token's `access` claim does not grant. A granted `*` covers every
 * action of that resource (distribution `actionSet.contains`); the resource class is ignored on
 * both sides, as registries do.
 *
 * @example
 * missingAccess([{ type: 'repository', name: 'a/b', actions: ['pull', 'push'] }],
 *   [{ type: 'repository', name: 'a/b', actions: ['pull'] }])
 * // → [{ type: 'repository', name: 'a/b', action: 'push' }]
 */
export function missingAccess(required: readonly ResourceScope[], granted: readonly AccessEntry[]): AccessRecord[] {
  return accessRecords(required).filter(
    (need) =>
      !granted.some(
        (entry) => entry.type === need.type && entry.name === need.name && (entry.actions.includes('*') || entry.actions.includes(need.action)),
      ),
  );
}

/**
 * Whether `granted` covers every required action: {@link missingAccess} without building the
 * list, for the success path of every protected request.
 */
export function grantsAll(required: readonly ResourceScope[], granted: readonly AccessEntry[]): boolean {
  for (const scope of required) {
    for (const action of scope.actions) {
      let covered = false;
      for (const entry of granted) {
        if (entry.type === scope.type && entry.name === scope.name && (entry.actions.includes('*') || entry.actions.includes(action))) {
          covered = true;
          break;
        }
      }
      if (!covered) return false;
    }
  }
  return true;
}
