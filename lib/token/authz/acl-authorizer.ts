import { readFileSync } from 'node:fs';
import type { ResourceScope } from '../../scope/index.js';
import type { AclRule } from './acl-rule.js';
import { compileAclRule, type CompiledAclRule } from './compile-acl-rule.js';
import type { Authorizer } from './types.js';
import { optionalFunction } from '../../options/option-checks.js';

/** What decided one requested resource; see {@link AclAuthorizerOptions.onDecision}. */
export interface AclDecision {
  /** The account asking (`''` when anonymous). */
  account: string;
  /** The resource as requested. */
  scope: ResourceScope;
  /** Index of the rule that matched, or `null` when none did (default deny). */
  rule: number | null;
  /** That rule's `comment`, if it has one. */
  comment?: string;
  /** The actions granted on the resource (empty when denied). */
  granted: string[];
}

/** Options of {@link aclAuthorizer}. */
export interface AclAuthorizerOptions {
  /**
   * Called once per requested resource with the rule that decided it, for audit logs or for
   * finding out why a rule "does not work" (usually an earlier rule matched first). Defaults to
   * no callback.
   */
  onDecision?: (decision: AclDecision) => void;
}

/** Where the rules come from: a list, or a JSON file holding a list or `{ "acl": [ … ] }`. */
export type AclSource = AclRule[] | { file: string };

function loadRules(source: unknown): unknown[] {
  if (Array.isArray(source)) return source;
  if (typeof source !== 'object' || source === null || typeof (source as { file?: unknown }).file !== 'string') {
    throw new TypeError('acl rules must be an array of rules or { file: "rules.json" }');
  }
  const file = (source as { file: string }).file;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw new TypeError(`acl file ${file}: not valid JSON (${err.message})`);
  }
  // `{ "acl": [...] }` is docker_auth's configuration key, so its ACL section converts as is.
  const rules = Array.isArray(parsed) ? parsed : (parsed as { acl?: unknown } | null)?.acl;
  if (!Array.isArray(rules)) throw new TypeError(`acl file ${file}: must hold an array of rules or { "acl": [ … ] }`);
  return rules;
}

function grant(rule: CompiledAclRule, requested: readonly string[]): string[] {
  if (rule.actions === '*') return [...requested];
  const listed = rule.actions;
  // A requested `*` (registry:catalog:*) is granted only by a rule listing `*`: naming every
  // action would be more than was asked for, and fewer would not be what `*` means.
  return requested.filter((action) => listed.has(action));
}

/**
 * An {@link Authorizer} evaluating an ordered access-control list in the style of
 * cesanta/docker_auth. Each requested resource is decided on its own: the **first** rule whose
 * `match` holds decides it; `actions: ['*']` grants every requested action, a list grants the
 * requested actions it names, and `[]` denies the resource outright. When no rule matches the
 * resource is denied. The rules are validated and compiled once, here; the file form is read once
 * (restart to change it).
 *
 * @throws {TypeError} naming the rule index (from 0) and field, e.g. `acl rule #2: "match.name" has an unclosed "["`.
 * @example
 * const authorize = aclAuthorizer([
 *   { match: { account: 'admin' }, actions: ['*'] },
 *   { match: { account: '/.+/', type: 'repository', name: '${account}/**' }, actions: ['pull', 'push'] },
 *   { match: { type: 'repository', name: 'library/*' }, actions: ['pull'] },
 * ]);
 * authorize({ account: 'alice', service: 'registry.local',
 *   scopes: [{ type: 'repository', name: 'alice/app', actions: ['pull', 'push', 'delete'] }] });
 * // → [{ type: 'repository', name: 'alice/app', actions: ['pull', 'push'] }]
 */
export function aclAuthorizer(rules: AclSource, options: AclAuthorizerOptions = {}): Authorizer {
  const compiled = loadRules(rules).map((rule, index) => compileAclRule(rule, index));
  if (typeof options !== 'object' || options === null) throw new TypeError('acl options must be an object');
  const { onDecision } = options;
  optionalFunction(onDecision, 'onDecision');

  return (request) => {
    const granted: ResourceScope[] = [];
    for (const scope of request.scopes) {
      const variables = {
        account: request.account,
        name: scope.name,
        service: request.service,
        type: scope.type,
        labels: request.labels,
      };
      const rule = compiled.find((candidate) => candidate.matches(variables, request.ip));
      const actions = rule ? grant(rule, scope.actions) : [];
      if (actions.length > 0) {
        const entry: ResourceScope = { type: scope.type, name: scope.name, actions };
        if (scope.class !== undefined) entry.class = scope.class;
        granted.push(entry);
      }
      if (onDecision) {
        const decision: AclDecision = { account: request.account, scope, rule: rule ? rule.index : null, granted: actions };
        if (rule?.comment !== undefined) decision.comment = rule.comment;
        onDecision(decision);
      }
    }
    return granted;
  };
}
