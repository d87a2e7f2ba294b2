/**
 * dockerd's `label` filter: `key` matches a label that exists, `key=value` one with that value.
 * Own properties only, so `constructor` or `__proto__` match no container.
 *
 * @example
 * labelMatches({ team: 'a' }, 'team')   // true
 * labelMatches({ team: 'a' }, 'team=b') // false
 */
export function labelMatches(labels: Record<string, string>, filter: string): boolean {
  const i = filter.indexOf('=');
  if (i === -1) return Object.hasOwn(labels, filter);
  const key = filter.slice(0, i);
  return Object.hasOwn(labels, key) && labels[key] === filter.slice(i + 1);
}
