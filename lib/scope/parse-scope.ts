import { isDomain, isPathComponent, splitRepositoryName } from '../reference/repository-name.js';
import { ScopeSyntaxError } from './scope-syntax-error.js';
import type { ResourceScope } from './types.js';

// Grammar from the distribution spec (docs/spec/auth/scope.md):
//   resourcetype  := resourcetypevalue [ '(' resourcetypevalue ')' ]
//   resourcename  := [ hostname '/' ] component [ '/' component ]*
//   hostname      := hostcomponent ['.' hostcomponent]* [':' port-number]
//   action        := /[a-z]*/   (plus `*`, which registries use as a wildcard: registry:catalog:*)
const TYPE = /^([a-z0-9]+)(?:\(([a-z0-9]+)\))?$/;
const ACTION = /^(?:[a-z]*|\*)$/;
/** Longest resource scope accepted; distribution limits repository names to 255 characters. */
const MAX_SCOPE_LENGTH = 1024;

function isValidName(name: string): boolean {
  if (name.length === 0 || name.length > 255) return false;
  const { domain, components } = splitRepositoryName(name);
  if (domain !== undefined && !isDomain(domain)) return false;
  return components.every(isPathComponent);
}

/**
 * Parses one resource scope such as `repository:library/ubuntu:pull,push`.
 *
 * The name may itself hold one `:` (a `host:port` prefix), so the type is taken before the first
 * `:` and the actions after the last one, as the spec warns.
 *
 * @example
 * parseScope('repository:localhost:5000/app:pull')
 * // → { type: 'repository', name: 'localhost:5000/app', actions: ['pull'] }
 * @throws {ScopeSyntaxError} when the string is not a resource scope.
 */
export function parseScope(scope: string): ResourceScope {
  if (typeof scope !== 'string' || scope.length === 0 || scope.length > MAX_SCOPE_LENGTH) {
    throw new ScopeSyntaxError('scope must be a non-empty string of at most 1024 characters');
  }
  const first = scope.indexOf(':');
  const last = scope.lastIndexOf(':');
  if (first <= 0 || last === first) {
    throw new ScopeSyntaxError('scope must have the form type:name:actions');
  }
  const typeMatch = TYPE.exec(scope.slice(0, first));
  if (!typeMatch) throw new ScopeSyntaxError('scope has an invalid resource type');
  const name = scope.slice(first + 1, last);
  if (!isValidName(name)) throw new ScopeSyntaxError('scope has an invalid resource name');
  const actions = scope.slice(last + 1).split(',');
  if (!actions.every((a) => ACTION.test(a))) throw new ScopeSyntaxError('scope has an invalid action');
  const result: ResourceScope = {
    type: typeMatch[1] as string,
    name,
    actions: [...new Set(actions.filter((a) => a.length > 0))],
  };
  if (typeMatch[2] !== undefined) result.class = typeMatch[2];
  return result;
}

/**
 * Parses a scope parameter: a space-separated list (the POST form), a list of such strings (the
 * repeated GET parameter, or a repeated POST field as containers/image sends), or nothing.
 * Empty entries are skipped, so `scope=` asks for no access (the login case).
 *
 * @throws {ScopeSyntaxError} when any entry is not a resource scope.
 */
export function parseScopeList(scope: string | readonly string[] | undefined): ResourceScope[] {
  if (scope === undefined) return [];
  const values = typeof scope === 'string' ? [scope] : scope;
  const out: ResourceScope[] = [];
  for (const value of values) {
    for (const part of value.split(' ')) {
      if (part.length > 0) out.push(parseScope(part));
    }
  }
  return out;
}
