import type { Request } from 'express';
import { mergeScopes, parseScope, type ResourceScope } from '../../scope/index.js';

/**
 * What a route requires: one resource scope per string (`type[(class)]:name:actions`), a list of
 * them, or a function of the request returning either. `[]` requires only a valid token — the
 * `/v2/` base check, which registries challenge with no scope.
 */
export type BearerScope = string | readonly string[] | ((req: Request) => string | readonly string[]);

/**
 * Parses a scope requirement. Each string is exactly one resource scope: a space is not a list
 * separator here, so request data interpolated into a name cannot add a scope of its own.
 *
 * @throws {ScopeSyntaxError} for a string outside the grammar.
 * @throws {TypeError} for a value that is not a string or list, or a scope with no action.
 */
export function parseRequiredScopes(value: unknown): ResourceScope[] {
  const list: unknown[] = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  if (typeof value !== 'string' && !Array.isArray(value)) throw new TypeError('a bearer scope must be a string or a list of strings');
  const scopes = list.map((s) => {
    if (typeof s !== 'string') throw new TypeError('a bearer scope must be a string or a list of strings');
    const scope = parseScope(s);
    if (scope.actions.length === 0) throw new TypeError(`bearer scope ${s} names no action`);
    return scope;
  });
  return mergeScopes(scopes);
}
