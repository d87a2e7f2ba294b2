/**
 * Extracts the token from an `Authorization` header the way registry 2.8 does: split on single
 * spaces, exactly two parts, the first `bearer` in any case. Anything else (no header, Basic,
 * extra spaces) counts as no token at all, which the registry answers with a challenge that has
 * no `error` (RFC 6750 §3). `Bearer ` with an empty token returns `''`, an invalid token.
 *
 * @example
 * bearerTokenFrom('Bearer eyJ…') // 'eyJ…'
 * bearerTokenFrom('Basic YTpi')  // undefined
 */
export function bearerTokenFrom(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  // indexOf rather than split: no array per request on the path of every protected request.
  const space = header.indexOf(' ');
  if (space !== 6 || header.indexOf(' ', 7) !== -1) return undefined;
  const scheme = header.slice(0, 6);
  if (scheme !== 'Bearer' && scheme.toLowerCase() !== 'bearer') return undefined;
  return header.slice(7);
}
