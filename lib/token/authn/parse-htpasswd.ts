import { HtpasswdFormatError } from './htpasswd-format-error.js';

/** A parsed htpasswd table: user → bcrypt hash. */
export interface HtpasswdTable {
  users: Map<string, string>;
  /** The bcrypt cost most users have, used for the dummy comparison of unknown users. */
  typicalCost: number;
}

// Modular-crypt bcrypt: $2a$/$2b$/$2y$, two-digit cost 04–31, 22 salt + 31 hash characters.
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

/** Names the scheme of a non-bcrypt hash from its prefix only, so the hash itself is never shown. */
function describeScheme(hash: string): string {
  if (hash.startsWith('$2')) return 'a malformed bcrypt hash';
  if (hash.startsWith('$apr1$')) return 'Apache MD5 ($apr1$)';
  if (hash.startsWith('$1$')) return 'MD5-crypt ($1$)';
  if (hash.startsWith('$5$')) return 'SHA-256-crypt ($5$)';
  if (hash.startsWith('$6$')) return 'SHA-512-crypt ($6$)';
  if (hash.startsWith('$argon2')) return 'Argon2';
  if (hash.startsWith('{SHA}')) return 'SHA-1 ({SHA})';
  if (hash.length === 0) return 'an empty hash';
  return 'crypt(3) or plain text';
}

/**
 * Parses htpasswd text (`user:hash` per line, as `htpasswd -B` writes it). Blank lines and lines
 * starting with `#` are skipped; CRLF line ends are accepted because files edited on Windows have
 * them. Only bcrypt is accepted: the other htpasswd schemes (MD5, SHA-1, crypt, plain) are cheap
 * to brute-force.
 *
 * @param origin Prefix for error messages, e.g. `htpasswd file /etc/registry/htpasswd`.
 * @throws {HtpasswdFormatError} naming the first bad line; the message never holds the hash.
 * @example
 * parseHtpasswd('alice:$2y$10$…\n# CI\nci:$2b$10$…', 'htpasswd').users.has('alice'); // true
 */
export function parseHtpasswd(text: string, origin: string): HtpasswdTable {
  const users = new Map<string, string>();
  const firstLine = new Map<string, number>();
  const costs = new Map<number, number>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const line = (lines[i] as string).replace(/\r$/, '');
    const trimmed = line.trim();
    if (trimmed.length === 0 || trimmed.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon <= 0) {
      throw new HtpasswdFormatError(`${origin} line ${lineNo}: expected "user:hash"`, lineNo);
    }
    const user = line.slice(0, colon);
    const hash = line.slice(colon + 1).trimEnd();
    const match = BCRYPT.exec(hash);
    if (!match) {
      throw new HtpasswdFormatError(
        `${origin} line ${lineNo}: user ${JSON.stringify(user)} has ${describeScheme(hash)}; ` +
          'only bcrypt ($2a$, $2b$, $2y$) is accepted (create it with `htpasswd -B`)',
        lineNo,
      );
    }
    const earlier = firstLine.get(user);
    if (earlier !== undefined) {
      throw new HtpasswdFormatError(
        `${origin} line ${lineNo}: user ${JSON.stringify(user)} is already defined on line ${earlier}`,
        lineNo,
      );
    }
    users.set(user, hash);
    firstLine.set(user, lineNo);
    const cost = Number(match[1]);
    costs.set(cost, (costs.get(cost) ?? 0) + 1);
  }
  let typicalCost = 10;
  let seen = 0;
  for (const [cost, count] of costs) {
    if (count > seen) [typicalCost, seen] = [cost, count];
  }
  return { users, typicalCost };
}
