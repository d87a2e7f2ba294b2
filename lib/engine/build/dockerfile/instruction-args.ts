import { EngineError } from '../../../engine-api/engine-error.js';

/** An instruction's arguments in exec form (a JSON array) or shell form (one string). */
export type CommandForm = { exec: string[] } | { shell: string };

/**
 * `["a", "b"]` is the exec form when it parses as a JSON array of strings; anything else is the
 * shell form, as the classic builder decides (a broken JSON array runs as shell text).
 *
 * @example
 * commandForm('["echo", "hi"]'); // { exec: ['echo', 'hi'] }
 * commandForm('echo hi');        // { shell: 'echo hi' }
 */
export function commandForm(args: string): CommandForm {
  const text = args.trim();
  if (text.startsWith('[')) {
    try {
      const value: unknown = JSON.parse(text);
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return { exec: value as string[] };
    } catch {
      // shell form
    }
  }
  return { shell: text };
}

/**
 * Leading `--name=value` (or `--name`) flags of COPY, ADD, FROM, RUN and HEALTHCHECK, and the
 * rest. Only `allowed` names are accepted; another is dockerd's `Unknown flag: name`.
 *
 * @example
 * splitFlags('--from=build --chown=1:1 a b', ['from', 'chown']); // { flags: Map{from: 'build', chown: '1:1'}, rest: 'a b' }
 */
export function splitFlags(args: string, allowed: readonly string[]): { flags: Map<string, string>; rest: string } {
  const flags = new Map<string, string>();
  let rest = args.trim();
  for (;;) {
    const match = /^--([A-Za-z][A-Za-z0-9-]*)(?:=("[^"]*"|\S*))?(?:\s+|$)/.exec(rest);
    if (!match) break;
    const name = match[1] as string;
    if (!allowed.includes(name)) throw EngineError.invalidParameter(`Unknown flag: ${name}`);
    const value = match[2] ?? 'true';
    flags.set(name, value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value);
    rest = rest.slice(match[0].length);
  }
  return { flags, rest };
}

/**
 * Splits text on blanks outside quotes, keeping the quotes and escapes for the expansion that
 * follows (the parser's `parseWords`, used for ENV, LABEL and ARG).
 *
 * @example
 * splitWords('a=1 b="two words"'); // ['a=1', 'b="two words"']
 */
export function splitWords(text: string, escape = '\\'): string[] {
  const out: string[] = [];
  let word = '';
  let quote = '';
  let escaped = false;
  for (const ch of text) {
    if (escaped) { word += ch; escaped = false; continue; }
    if (ch === escape) { word += ch; escaped = true; continue; }
    if (quote !== '') {
      if (ch === quote) quote = '';
      word += ch;
      continue;
    }
    if (ch === '"' || ch === "'") { quote = ch; word += ch; continue; }
    if (/\s/.test(ch)) {
      if (word !== '') out.push(word);
      word = '';
      continue;
    }
    word += ch;
  }
  if (word !== '') out.push(word);
  return out;
}

/**
 * The name/value pairs of ENV and LABEL: `a=1 b="x y"`, or the legacy one-pair form `ENV a x y`
 * (the first word is the name, the rest the value). Values keep their quotes here; each is
 * expanded afterwards. A pair without `=` in the new form is dockerd's error.
 *
 * @example
 * nameValues('ENV', 'A=1 B="two words"'); // [['A', '1'], ['B', '"two words"']]
 */
export function nameValues(keyword: string, args: string, escape = '\\'): [string, string][] {
  const words = splitWords(args, escape);
  if (words.length === 0) throw EngineError.invalidParameter(`${keyword} requires at least one argument`);
  if (!(words[0] as string).includes('=')) {
    const m = /^(\S+)\s+([\s\S]*)$/.exec(args.trim());
    if (!m) throw EngineError.invalidParameter(`${keyword} names can not be blank`);
    return [[m[1] as string, (m[2] as string).trim()]];
  }
  return words.map((w) => {
    const eq = w.indexOf('=');
    if (eq < 0) throw EngineError.invalidParameter(`Syntax error - can't find = in "${w}". Must be of the form: name=value`);
    if (eq === 0) throw EngineError.invalidParameter(`${keyword} names can not be blank`);
    return [w.slice(0, eq), w.slice(eq + 1)];
  });
}
