import type { ResourceScope } from './types.js';

/**
 * Formats one resource scope as `type:name:a,b` (the class, being ignored by registries, is kept
 * only when present so an echoed scope reads like the request).
 */
export function formatScope(scope: ResourceScope): string {
  const type = scope.class ? `${scope.type}(${scope.class})` : scope.type;
  return `${type}:${scope.name}:${scope.actions.join(',')}`;
}

/**
 * Expands scopes to one `type:name:action` entry per action, joined by commas, as the token
 * endpoint's `scope` response field is written in the distribution spec's OAuth example
 * (`repository:a/b:pull,push` → `repository:a/b:pull,repository:a/b:push`).
 */
export function formatGrantedScope(scopes: readonly ResourceScope[]): string {
  const entries: string[] = [];
  for (const scope of scopes) {
    for (const action of scope.actions) entries.push(`${scope.type}:${scope.name}:${action}`);
  }
  return entries.join(',');
}
