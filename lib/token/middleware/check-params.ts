/** RFC 6749 Appendix A.1: client_id = *VSCHAR, VSCHAR = %x20-7E. */
const VSCHAR = /^[\x20-\x7E]*$/;
/** No control characters in names and services (they would end up in logs and headers). */
const NO_CONTROL = /^[^\x00-\x1F\x7F]*$/;
const MAX = 4096;

/** One parameter's rule. */
export interface ParamRule {
  name: string;
  required?: boolean;
  oneOf?: readonly string[];
  pattern?: [RegExp, string];
}

/** Fields of `POST /token` (distribution docs/spec/auth/oauth.md). */
export const POST_RULES: readonly ParamRule[] = [
  { name: 'grant_type', required: true },
  { name: 'service', required: true, pattern: [NO_CONTROL, 'holds a control character'] },
  { name: 'client_id', required: true, pattern: [VSCHAR, 'must be printable ASCII (RFC 6749 A.1)'] },
  { name: 'access_type', oneOf: ['online', 'offline'] },
  { name: 'username', pattern: [NO_CONTROL, 'holds a control character'] },
  { name: 'password' },
  { name: 'refresh_token' },
];

/** Query of `GET /token` (distribution docs/spec/auth/token.md); `scope` repeats and is checked by the scope parser. */
export const GET_RULES: readonly ParamRule[] = [
  { name: 'service', required: true, pattern: [NO_CONTROL, 'holds a control character'] },
  { name: 'client_id', pattern: [VSCHAR, 'must be printable ASCII (RFC 6749 A.1)'] },
  { name: 'offline_token', oneOf: ['true', 'false'] },
  { name: 'account', pattern: [NO_CONTROL, 'holds a control character'] },
];

/** Form of `POST /revoke` (RFC 7009 §2.1); an unknown `token_type_hint` is ignored, as §2.1 allows. */
export const REVOKE_RULES: readonly ParamRule[] = [
  { name: 'token', required: true },
  { name: 'token_type_hint' },
];

/** Checks one field's value against its rule; returns what is wrong, naming the field, or undefined. */
export function checkField(rule: ParamRule, value: unknown): string | undefined {
  if (value === undefined) return rule.required ? `"${rule.name}" is required` : undefined;
  // Names and rules only in messages: the value may be a password.
  if (typeof value !== 'string') return `"${rule.name}" must be a string`;
  if (value.length > MAX) return `"${rule.name}" must be at most ${MAX} characters`;
  if (rule.required && value.length === 0) return `"${rule.name}" is required`;
  if (rule.oneOf && !rule.oneOf.includes(value)) return `"${rule.name}" must be ${rule.oneOf.map((v) => `"${v}"`).join(' or ')}`;
  if (rule.pattern && !rule.pattern[0].test(value)) return `"${rule.name}" ${rule.pattern[1]}`;
  return undefined;
}

function check(rules: readonly ParamRule[], params: Record<string, unknown>): string | undefined {
  for (const rule of rules) {
    const problem = checkField(rule, params[rule.name]);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * Checks the POST form fields; returns what is wrong, naming the field, or undefined.
 *
 * @example
 * checkPostParams({ grant_type: 'password', service: 's' }) // '"client_id" is required'
 */
export const checkPostParams = (params: Record<string, unknown>): string | undefined => check(POST_RULES, params);

/** Checks the GET query; returns what is wrong, naming the field, or undefined. */
export const checkGetParams = (params: Record<string, unknown>): string | undefined => check(GET_RULES, params);

/** Checks the `POST /revoke` form; returns what is wrong, naming the field, or undefined. */
export const checkRevokeParams = (params: Record<string, unknown>): string | undefined => check(REVOKE_RULES, params);
