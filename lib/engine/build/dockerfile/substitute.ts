import { EngineError } from '../../../engine-api/engine-error.js';

/** Variables a word is expanded with: name → value (a name absent is unset, '' is set and empty). */
export type Variables = ReadonlyMap<string, string>;

/** The variables of `NAME=value` lines (a later line wins), as the builder's environment is kept. */
export function variablesOf(env: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of env) {
    const eq = entry.indexOf('=');
    if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1));
    else if (eq < 0 && entry !== '') out.set(entry, '');
  }
  return out;
}

/**
 * Expands one word as the classic builder does (moby's shell lexer `ProcessWord`): `$NAME`,
 * `${NAME}`, `${NAME:-word}` / `${NAME-word}` (default when unset or empty / unset),
 * `${NAME:+word}` / `${NAME+word}` (alternative when set and non-empty / set), `${NAME:?msg}` /
 * `${NAME?msg}` (an error), single quotes literal, double quotes expanding, the escape
 * character taking the next character literally (inside double quotes only before `"`, `$` and
 * itself). Quotes are removed. `$` before anything that starts no name is a literal `$`.
 *
 * @example
 * processWord('${A:-x}/"$B"', new Map([['B', 'y']])); // 'x/y'
 */
export function processWord(word: string, vars: Variables, escape = '\\'): string {
  return new Lexer(word, vars, escape).words(false).join('');
}

/**
 * Expands and splits a line into words (moby's `ProcessWords`): blanks outside quotes separate
 * words, and a word that came out of a variable is not split again (as Docker, unlike a shell).
 *
 * @example
 * processWords('80/tcp "$P"', new Map([['P', '443']])); // ['80/tcp', '443']
 */
export function processWords(line: string, vars: Variables, escape = '\\'): string[] {
  return new Lexer(line, vars, escape).words(true);
}

class Lexer {
  #pos = 0;
  constructor(readonly text: string, readonly vars: Variables, readonly escape: string) {}

  words(split: boolean): string[] {
    const out: string[] = [];
    let current = '';
    let started = false;
    const text = this.text;
    while (this.#pos < text.length) {
      const ch = text[this.#pos] as string;
      if (split && /\s/.test(ch)) {
        if (started) out.push(current);
        current = '';
        started = false;
        this.#pos++;
        continue;
      }
      started = true;
      if (ch === this.escape) {
        this.#pos++;
        if (this.#pos < text.length) current += text[this.#pos++];
        continue;
      }
      if (ch === "'") {
        current += this.single();
        continue;
      }
      if (ch === '"') {
        current += this.double();
        continue;
      }
      if (ch === '$') {
        current += this.dollar();
        continue;
      }
      current += ch;
      this.#pos++;
    }
    if (started || !split) out.push(current);
    return out;
  }

  single(): string {
    const end = this.text.indexOf("'", this.#pos + 1);
    if (end < 0) throw EngineError.invalidParameter('unexpected end of statement while looking for matching single-quote');
    const value = this.text.slice(this.#pos + 1, end);
    this.#pos = end + 1;
    return value;
  }

  double(): string {
    this.#pos++;
    let out = '';
    const text = this.text;
    while (this.#pos < text.length) {
      const ch = text[this.#pos] as string;
      if (ch === '"') {
        this.#pos++;
        return out;
      }
      if (ch === '$') {
        out += this.dollar();
        continue;
      }
      if (ch === this.escape) {
        const next = text[this.#pos + 1];
        if (next === undefined) { this.#pos++; continue; }
        if (next === '"' || next === '$' || next === this.escape) {
          out += next;
          this.#pos += 2;
          continue;
        }
      }
      out += ch;
      this.#pos++;
    }
    throw EngineError.invalidParameter('unexpected end of statement while looking for matching double-quote');
  }

  dollar(): string {
    const text = this.text;
    this.#pos++;
    const next = text[this.#pos];
    if (next === '{') {
      this.#pos++;
      const name = this.name();
      if (name === '') throw EngineError.invalidParameter(`bad substitution: ${text}`);
      const close = text[this.#pos];
      if (close === '}') {
        this.#pos++;
        return this.vars.get(name) ?? '';
      }
      let op = '';
      if (close === ':') { op = ':'; this.#pos++; }
      const kind = text[this.#pos];
      if (kind !== '-' && kind !== '+' && kind !== '?') throw EngineError.invalidParameter(`unsupported modifier (${op}${kind ?? ''}) in substitution: ${text}`);
      this.#pos++;
      const word = this.until('}');
      const value = this.vars.get(name);
      const set = op === ':' ? value !== undefined && value !== '' : value !== undefined;
      if (kind === '-') return set ? (value as string) : word;
      if (kind === '+') return set ? word : '';
      if (!set) throw EngineError.invalidParameter(`${name}: ${word === '' ? 'is not allowed to be unset' : word}`);
      return value as string;
    }
    const name = this.name();
    return name === '' ? '$' : this.vars.get(name) ?? '';
  }

  name(): string {
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.#pos)) ?? /^[0-9]/.exec(this.text.slice(this.#pos));
    if (!match) return '';
    this.#pos += match[0].length;
    return match[0];
  }

  /** The word of a modifier, itself expanded, up to the closing brace. */
  until(close: string): string {
    let out = '';
    const text = this.text;
    while (this.#pos < text.length) {
      const ch = text[this.#pos] as string;
      if (ch === close) {
        this.#pos++;
        return out;
      }
      if (ch === this.escape) {
        this.#pos++;
        if (this.#pos < text.length) out += text[this.#pos++];
        continue;
      }
      if (ch === '$') { out += this.dollar(); continue; }
      if (ch === "'") { out += this.single(); continue; }
      if (ch === '"') { out += this.double(); continue; }
      out += ch;
      this.#pos++;
    }
    throw EngineError.invalidParameter(`missing '}' in substitution: ${text}`);
  }
}
