import type { ResourceScope } from './types.js';

/**
 * Merges scopes naming the same resource (type and name; the class is ignored, as registries do)
 * into one entry holding the union of their actions, keeping first-seen order.
 */
export function mergeScopes(scopes: readonly ResourceScope[]): ResourceScope[] {
  const byKey = new Map<string, ResourceScope>();
  for (const scope of scopes) {
    const key = `${scope.type}\u0000${scope.name}`;
    const seen = byKey.get(key);
    if (seen) {
      for (const action of scope.actions) if (!seen.actions.includes(action)) seen.actions.push(action);
    } else {
      byKey.set(key, { type: scope.type, name: scope.name, actions: [...scope.actions] });
    }
  }
  return [...byKey.values()];
}
