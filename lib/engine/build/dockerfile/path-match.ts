/**
 * Go's `filepath.Match` (what COPY and ADD sources are matched with): `*` any run of characters
 * but `/`, `?` one such character, `[…]` a class (`[^…]` or `[!…]` negated), the escape `\`
 * taking the next character literally, matched against the whole path. Written here because
 * the npm globbers (minimatch, picomatch) add brace and extglob syntax Docker does not have, so
 * `{a,b}` would match files Docker never copies.
 *
 * @example
 * pathMatch('src/*.ts', 'src/a.ts'); // true
 * pathMatch('*.ts', 'src/a.ts');     // false
 */
export function pathMatch(pattern: string, path: string): boolean {
  return toRegExp(pattern).test(path);
}

function toRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i] as string;
    if (ch === '*') out += '[^/]*';
    else if (ch === '?') out += '[^/]';
    else if (ch === '\\' && i + 1 < pattern.length) out += escape(pattern[++i] as string);
    else if (ch === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) {
        out += '\\[';
        continue;
      }
      let body = pattern.slice(i + 1, end);
      const negated = body.startsWith('^') || body.startsWith('!');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^/' : ''}${body.replace(/[\]\\]/g, (c) => `\\${c}`)}]`;
      i = end;
    } else out += escape(ch);
  }
  return new RegExp(`^${out}$`);
}

function escape(ch: string): string {
  return ch.replace(/[.*+?^${}()|[\]\\/]/g, (c) => `\\${c}`);
}
