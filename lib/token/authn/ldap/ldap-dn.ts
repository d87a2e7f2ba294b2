/**
 * The value of a DN's first RDN (RFC 4514), unescaped: `cn=team-a,ou=groups,dc=example,dc=org`
 * → `team-a`. Group DNs from `memberOf` are turned into group names this way. Returns undefined
 * for what is not a DN, or a first RDN that is multi-valued (`cn=a+uid=b`) or hex-encoded
 * (`cn=#04…`): no name could be told from those without guessing.
 *
 * Written here rather than taken from ldapts, whose DN class builds DNs but does not parse them.
 *
 * @example
 * firstRdnValue('cn=Smith\\, J,ou=people,dc=ex'); // 'Smith, J'
 */
export function firstRdnValue(dn: string): string | undefined {
  const equals = dn.indexOf('=');
  if (equals <= 0) return undefined;
  let value = '';
  let i = equals + 1;
  if (dn[i] === '#') return undefined;
  for (; i < dn.length; i++) {
    const char = dn[i] as string;
    if (char === ',' || char === ';') break;
    if (char === '+') return undefined;
    if (char === '\\') {
      const next = dn.slice(i + 1, i + 3);
      if (/^[0-9A-Fa-f]{2}$/.test(next)) {
        // Hex pairs may spell a multi-byte UTF-8 character: collect the run, then decode.
        const bytes: number[] = [];
        while (dn[i] === '\\' && /^[0-9A-Fa-f]{2}$/.test(dn.slice(i + 1, i + 3))) {
          bytes.push(parseInt(dn.slice(i + 1, i + 3), 16));
          i += 3;
        }
        value += Buffer.from(bytes).toString('utf8');
        i--;
        continue;
      }
      if (i + 1 >= dn.length) return undefined;
      value += dn[i + 1];
      i++;
      continue;
    }
    value += char;
  }
  const trimmed = value.trim();
  return trimmed.length > 0 ? trimmed : undefined;
}
