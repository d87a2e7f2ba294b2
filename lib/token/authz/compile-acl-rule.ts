import { compileAclIpRange, type AclIpRange } from './acl-ip-range.js';
import { compileAclPattern, labelValues, type AclPattern, type AclVariables } from './acl-pattern.js';

/** A validated rule: its matcher and what it grants. */
export interface CompiledAclRule {
  index: number;
  comment: string | undefined;
  /** `'*'` for every requested action, otherwise the listed ones (empty: an explicit deny). */
  actions: '*' | ReadonlySet<string>;
  matches(variables: AclVariables, ip: string | undefined): boolean;
}

const RULE_KEYS = new Set(['match', 'actions', 'comment']);
const PATTERN_FIELDS = ['account', 'type', 'name', 'service'] as const;
const MATCH_KEYS = new Set<string>([...PATTERN_FIELDS, 'ip', 'labels']);
// Registry actions are lower-case words (distribution scope grammar: action := /[a-z]*/).
const ACTION = /^[a-z]+$/;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates one ACL rule and compiles its patterns. Unknown keys are errors rather than ignored:
 * a misspelt condition (`acount`) would otherwise silently widen the rule.
 *
 * @throws {TypeError} `acl rule #INDEX: "FIELD" …` naming the first problem.
 * @example
 * compileAclRule({ match: { name: 'library/*' }, actions: ['pull'] }, 0);
 */
export function compileAclRule(rule: unknown, index: number): CompiledAclRule {
  const fail = (field: string, problem: string): never => {
    throw new TypeError(`acl rule #${index}: "${field}" ${problem}`);
  };
  if (!isPlainObject(rule)) return fail('rule', 'must be an object with "match" and "actions"');
  for (const key of Object.keys(rule)) {
    if (!RULE_KEYS.has(key)) fail(key, 'is not a rule field (match, actions, comment)');
  }
  const { match, actions, comment } = rule;
  if (comment !== undefined && typeof comment !== 'string') fail('comment', 'must be a string');

  if (!Array.isArray(actions)) return fail('actions', 'must be an array: ["*"], a list of actions, or [] to deny');
  actions.forEach((action, i) => {
    if (typeof action !== 'string' || (action !== '*' && !ACTION.test(action))) {
      fail(`actions[${i}]`, 'must be "*" or a lower-case action name such as "pull"');
    }
  });
  if (actions.includes('*') && actions.length > 1) fail('actions', 'must be ["*"] alone when it holds "*"');

  if (!isPlainObject(match)) return fail('match', 'must be an object (use {} to match every request)');
  for (const key of Object.keys(match)) {
    if (!MATCH_KEYS.has(key)) fail(`match.${key}`, 'is not a match field (account, type, name, service, ip, labels)');
  }
  const pattern = (field: string, value: unknown): AclPattern => {
    if (typeof value !== 'string') return fail(field, 'must be a string pattern');
    try {
      return compileAclPattern(value);
    } catch (err) {
      return fail(field, (err as Error).message);
    }
  };

  const fields: Array<[(typeof PATTERN_FIELDS)[number], AclPattern]> = [];
  for (const field of PATTERN_FIELDS) {
    if (match[field] !== undefined) fields.push([field, pattern(`match.${field}`, match[field])]);
  }
  let ipRange: AclIpRange | undefined;
  if (match.ip !== undefined) {
    if (typeof match.ip !== 'string') fail('match.ip', 'must be a string address or CIDR block');
    try {
      ipRange = compileAclIpRange(match.ip as string);
    } catch (err) {
      fail('match.ip', (err as Error).message);
    }
  }
  const labels: Array<[string, AclPattern]> = [];
  if (match.labels !== undefined) {
    if (!isPlainObject(match.labels)) fail('match.labels', 'must be an object of label name → pattern');
    for (const [key, value] of Object.entries(match.labels as Record<string, unknown>)) {
      labels.push([key, pattern(`match.labels.${key}`, value)]);
    }
  }

  return {
    index,
    comment: comment as string | undefined,
    actions: actions[0] === '*' ? '*' : new Set(actions as string[]),
    matches(variables, ip) {
      if (ipRange && !ipRange(ip)) return false;
      if (labels.length === 0) {
        for (const [field, compiled] of fields) {
          if (!compiled.matches(variables[field], variables)) return false;
        }
        return true;
      }
      // A multi-valued label (groups) is narrowed to the values its condition admits before
      // `${labels:KEY}` is substituted: with { labels: { groups: 'team-*' }, name:
      // '${labels:groups}/*' } a member of team-a and admins reaches team-a/…, never admins/….
      const narrowed: Record<string, string[]> = { ...variables.labels };
      for (const [key, compiled] of labels) {
        const admitted = labelValues(variables.labels, key).filter((value) => compiled.matches(value, variables));
        if (admitted.length === 0) return false;
        narrowed[key] = admitted;
      }
      const bound: AclVariables = { ...variables, labels: narrowed };
      for (const [field, compiled] of fields) {
        if (!compiled.matches(variables[field], bound)) return false;
      }
      return true;
    },
  };
}
