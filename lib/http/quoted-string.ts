// RFC 9110 §5.6.4: quoted-string = DQUOTE *( qdtext / quoted-pair ) DQUOTE, where only `"` and `\`
// need a backslash. Control characters other than HTAB cannot appear at all (and Node refuses
// them in header values), so they are an error rather than something to escape.
const FORBIDDEN = /[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/;

/** True when `value` can be written as an RFC 9110 quoted-string. */
export function isQuotable(value: string): boolean {
  return !FORBIDDEN.test(value);
}

/**
 * Writes `value` as an RFC 9110 quoted-string, escaping `"` and `\`, so no value can close the
 * string early and add parameters of its own.
 *
 * @example
 * quotedString('a "b"') // '"a \\"b\\""'
 * @throws {TypeError} for control characters or characters outside Latin-1.
 */
export function quotedString(value: string): string {
  if (!isQuotable(value)) throw new TypeError('a challenge parameter holds a control or non-Latin-1 character');
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}
