import { formatScope, mergeScopes, parseScope, type ResourceScope } from '../../scope/index.js';

/** One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1). */
export interface AuthChallenge {
  /** The auth-scheme as sent (compare case-insensitively). */
  scheme: string;
  /** Parameters by lower-cased name; a repeated `scope` is space-joined, other repeats keep the first value. */
  params: Record<string, string>;
  /** The token68 form (`Basic abc==`), when used instead of parameters. */
  token68?: string;
}

/** A registry's Bearer challenge, ready for a token request. */
export interface BearerChallenge {
  scheme: 'Bearer';
  /** The token endpoint. */
  realm: string;
  /** The service to ask a token for, when the challenge names one. */
  service?: string;
  /** One scope list: every offered scope, split, de-duplicated and merged per resource. */
  scopes: string[];
  /** RFC 6750 error code (`invalid_token`, `insufficient_scope`), when present. */
  error?: string;
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68 = /[A-Za-z0-9\-._~+/]/;

class Cursor {
  i = 0;
  constructor(readonly s: string) {}
  peek(): string | undefined {
    return this.s[this.i];
  }
  skipWhitespace(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
  }
  read(chars: RegExp): string {
    const start = this.i;
    while (this.i < this.s.length && chars.test(this.s[this.i] as string)) this.i++;
    return this.s.slice(start, this.i);
  }
  /** RFC 9110 §5.6.4 quoted-string, with quoted-pair unescaped; undefined when unterminated. */
  readQuoted(): string | undefined {
    let out = '';
    this.i++;
    while (this.i < this.s.length) {
      const c = this.s[this.i++] as string;
      if (c === '"') return out;
      if (c === '\\' && this.i < this.s.length) out += this.s[this.i++];
      else out += c;
    }
    return undefined;
  }
}

function addParam(challenge: AuthChallenge, name: string, value: string): void {
  const key = name.toLowerCase();
  if (key === 'scope' && challenge.params.scope !== undefined) challenge.params.scope += ` ${value}`;
  else if (challenge.params[key] === undefined) challenge.params[key] = value;
}

/**
 * Parses every challenge of a `WWW-Authenticate` header (several headers may be passed as a list,
 * or joined with commas as `fetch` does). Parameters may be tokens or quoted strings with
 * escapes. Parsing stops at the first syntax error, keeping what came before it.
 *
 * @example
 * parseChallenges('Basic realm="x", Bearer realm="https://auth/token",service="reg"')
 * // → [{ scheme: 'Basic', params: { realm: 'x' } }, { scheme: 'Bearer', params: { realm: 'https://auth/token', service: 'reg' } }]
 */
export function parseChallenges(header: string | readonly string[]): AuthChallenge[] {
  const c = new Cursor(typeof header === 'string' ? header : header.join(', '));
  const challenges: AuthChallenge[] = [];
  let current: AuthChallenge | undefined;
  for (;;) {
    c.skipWhitespace();
    while (c.peek() === ',') {
      c.i++;
      c.skipWhitespace();
    }
    if (c.peek() === undefined) return challenges;
    const start = c.i;
    const name = c.read(TCHAR);
    if (name.length === 0) return challenges;
    c.skipWhitespace();
    if (current && c.peek() === '=') {
      c.i++;
      c.skipWhitespace();
      const value = c.peek() === '"' ? c.readQuoted() : c.read(TCHAR);
      if (value === undefined) return challenges;
      addParam(current, name, value);
      continue;
    }
    // A token not followed by "=" starts a new challenge: `scheme [ token68 | params ]`.
    c.i = start + name.length;
    current = { scheme: name, params: {} };
    challenges.push(current);
    if (c.peek() !== ' ') continue;
    c.skipWhitespace();
    const mark = c.i;
    const t68 = c.read(TOKEN68);
    const padding = c.read(/=/);
    c.skipWhitespace();
    if (t68.length > 0 && (c.peek() === undefined || c.peek() === ',')) {
      // `scheme token68` only when nothing param-like follows (a param has "=" then a value).
      current.token68 = t68 + padding;
    } else {
      c.i = mark;
    }
  }
}

/** Turns space-separated, possibly repeated scopes into one list, merging those naming the same resource. */
function scopeList(raw: string | undefined): string[] {
  const parts = [...new Set((raw ?? '').split(' ').filter((s) => s.length > 0))];
  const parsed: ResourceScope[] = [];
  const verbatim: string[] = [];
  for (const part of parts) {
    try {
      parsed.push(parseScope(part));
    } catch {
      // Not ours to judge: a scope we cannot read is passed back to the server as it came.
      verbatim.push(part);
    }
  }
  return [...mergeScopes(parsed).map(formatScope), ...verbatim];
}

/**
 * The Bearer challenge of a `WWW-Authenticate` header (the first Bearer one with a `realm`), or
 * undefined when there is none. Its scopes become one list, as a token request sends them.
 *
 * @example
 * parseChallenge('Bearer realm="https://auth/token",service="reg",scope="repository:a/b:pull repository:a/b:push"')
 * // → { scheme: 'Bearer', realm: 'https://auth/token', service: 'reg', scopes: ['repository:a/b:pull,push'] }
 */
export function parseChallenge(header: string | readonly string[] | null | undefined): BearerChallenge | undefined {
  if (header === null || header === undefined) return undefined;
  const found = parseChallenges(header).find((ch) => ch.scheme.toLowerCase() === 'bearer' && ch.params.realm);
  if (!found) return undefined;
  const { realm, service, scope, error } = found.params;
  return {
    scheme: 'Bearer',
    realm: realm as string,
    ...(service !== undefined ? { service } : {}),
    scopes: scopeList(scope),
    ...(error !== undefined ? { error } : {}),
  };
}
