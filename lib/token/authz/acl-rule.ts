/**
 * Conditions of one ACL rule; every condition given must hold, and an empty `match` matches every
 * request. Each string except `ip` is a pattern:
 *
 * - `/regex/` — a JavaScript regular expression that must match the whole value (it is anchored);
 * - otherwise a glob with Go `path.Match` syntax, as cesanta/docker_auth uses: `*` is any run of
 *   characters other than `/`, `?` one character other than `/`, `[a-z]` / `[^a-z]` a class (never
 *   matching `/`), and `\` escapes the next character. One extension: `**` is any run of
 *   characters *including* `/`, so `${account}/**` reaches `alice/a/b` (docker_auth issue #366);
 * - a string without any of those characters is compared literally.
 *
 * Patterns may hold `${account}`, `${name}`, `${service}`, `${type}` and `${labels:KEY}`, replaced
 * by the request's values. A substituted value always matches literally — an account named `a*` is
 * not a wildcard — and `${labels:KEY}` matches any one of the label's values (a pattern naming a
 * label the identity lacks matches nothing).
 *
 * @example
 * const match: AclMatch = { account: '/.+/', type: 'repository', name: '${account}/*' };
 */
export interface AclMatch {
  /** Pattern for the account (`''` for anonymous requests). */
  account?: string;
  /** Pattern for the resource type, e.g. `repository` or `registry`. */
  type?: string;
  /** Pattern for the resource name, e.g. `library/*`. */
  name?: string;
  /** Pattern for the `service` the token is for. */
  service?: string;
  /** An IPv4 or IPv6 address or CIDR block; IPv4-mapped IPv6 clients (`::ffff:10.0.0.1`) match IPv4 blocks. */
  ip?: string;
  /**
   * Label key → pattern; the identity must have, for every key, at least one value matching it.
   * In the rule's other patterns, `${labels:KEY}` of such a key then stands only for the values
   * that matched, so `{ labels: { groups: 'team-*' }, name: '${labels:groups}/*' }` opens the
   * namespaces of the member's `team-…` groups and not those of its other groups.
   */
  labels?: Record<string, string>;
}

/**
 * One rule of an {@link aclAuthorizer} list, in the shape cesanta/docker_auth users know. For each
 * requested resource the rules are tried in order and the first matching rule alone decides.
 *
 * @example
 * const rules: AclRule[] = [
 *   { match: { account: 'admin' }, actions: ['*'], comment: 'admin does anything' },
 *   { match: { name: 'secret/*' }, actions: [], comment: 'nobody else sees secret/' },
 *   { match: { account: '/.+/', name: '${account}/**' }, actions: ['pull', 'push'] },
 * ];
 */
export interface AclRule {
  /** When the rule applies. */
  match: AclMatch;
  /**
   * Actions granted on a matching resource: `['*']` grants every requested action, a list grants
   * the requested actions it names, and `[]` denies the resource and stops the search.
   */
  actions: string[];
  /** Free text for people reading the list; reported in {@link AclDecision}. */
  comment?: string;
}
