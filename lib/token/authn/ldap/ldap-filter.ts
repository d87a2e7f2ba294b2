import { Filter } from 'ldapts';

const PLACEHOLDER = /\$\{([^}]*)\}/g;

/**
 * Escapes a value for an LDAP search filter (RFC 4515 §3: `*`, `(`, `)`, `\` and NUL become
 * `\2a`, `\28`, `\29`, `\5c`, `\00`), with ldapts' own escaper: a user name `*)(uid=*` then
 * matches only an entry literally named so, never every entry.
 *
 * @example
 * escapeLdapFilterValue('*)(uid=*'); // '\\2a\\29\\28uid=\\2a'
 */
export function escapeLdapFilterValue(value: string): string {
  return Filter.escape(value);
}

/**
 * Checks a filter template once, at construction: balanced parentheses and only the named
 * placeholders, each `${NAME}`.
 *
 * @throws {TypeError} naming the option and the problem.
 */
export function checkFilterTemplate(template: unknown, option: string, names: readonly string[], required: readonly string[]): string {
  if (typeof template !== 'string' || !template.startsWith('(') || !template.endsWith(')')) {
    throw new TypeError(`"${option}" must be an LDAP filter in parentheses, e.g. "(uid=\${account})"`);
  }
  let depth = 0;
  for (const char of template) {
    depth += char === '(' ? 1 : char === ')' ? -1 : 0;
    if (depth < 0) break;
  }
  if (depth !== 0) throw new TypeError(`"${option}" has unbalanced parentheses`);
  const seen = new Set<string>();
  for (const found of template.matchAll(PLACEHOLDER)) {
    const name = found[1] as string;
    if (!names.includes(name)) throw new TypeError(`"${option}" uses unknown placeholder "\${${name}}" (known: ${names.map((n) => `\${${n}}`).join(', ')})`);
    seen.add(name);
  }
  for (const name of required) {
    if (!seen.has(name)) throw new TypeError(`"${option}" must contain \${${name}}`);
  }
  return template;
}

/**
 * Fills a filter template's `${NAME}` placeholders with escaped values.
 *
 * @example
 * ldapFilter('(&(objectClass=person)(uid=${account}))', { account: 'a*' }); // '(&(objectClass=person)(uid=a\\2a))'
 */
export function ldapFilter(template: string, values: Record<string, string>): string {
  return template.replace(PLACEHOLDER, (_all, name: string) => escapeLdapFilterValue(Object.hasOwn(values, name) ? (values[name] as string) : ''));
}
