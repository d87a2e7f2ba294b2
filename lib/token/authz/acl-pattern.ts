/** The request values a pattern's `${…}` variables are replaced with. */
export interface AclVariables {
  account: string;
  name: string;
  service: string;
  type: string;
  labels: Record<string, string[]> | undefined;
}

/** A validated pattern, ready to be tested against values. */
export interface AclPattern {
  matches(value: string, variables: AclVariables): boolean;
}

type Part = { source: string } | { variable: 'account' | 'name' | 'service' | 'type' } | { label: string };

const VARIABLE = /\$\{([^}]*)\}/g;
const SIMPLE_VARIABLES = new Set(['account', 'name', 'service', 'type']);
// Characters that make a glob more than a literal string.
const GLOB_SYNTAX = /[*?[\\]/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Escapes one character for use inside a `[…]` class (letters and digits would turn into `\d`, `\w`…). */
function escapeClassChar(char: string): string {
  return /[A-Za-z0-9]/.test(char) ? char : `\\${char}`;
}

/**
 * Translates a `path.Match` class starting after `[` at `start`; returns the regex source and the
 * index after the closing `]`.
 */
function translateClass(glob: string, start: number): { source: string; end: number } {
  let i = start;
  const negated = glob[i] === '^';
  if (negated) i++;
  let body = '';
  let ranges = 0;
  const readChar = (): string => {
    const char = glob[i];
    if (char === undefined) throw new Error('has an unclosed "["');
    if (char === '\\') {
      const escaped = glob[i + 1];
      if (escaped === undefined) throw new Error('ends with an unfinished "\\" escape');
      i += 2;
      return escaped;
    }
    if (char === '-' || char === ']') throw new Error(`has an unescaped "${char}" in a "[…]" class`);
    i++;
    return char;
  };
  for (;;) {
    if (glob[i] === ']' && ranges > 0) break;
    const low = readChar();
    let high = low;
    if (glob[i] === '-') {
      i++;
      high = readChar();
      if (high < low) throw new Error(`has a reversed range "${low}-${high}" in a "[…]" class`);
    }
    body += high === low ? escapeClassChar(low) : `${escapeClassChar(low)}-${escapeClassChar(high)}`;
    ranges++;
  }
  // path.Match: a class never matches the separator, whether negated or not.
  return { source: negated ? `[^${body}/]` : `(?!/)[${body}]`, end: i + 1 };
}

/** Translates a `path.Match` glob (plus `**`) to regex source. */
function translateGlob(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const char = glob[i] as string;
    if (char === '*') {
      if (glob[i + 1] === '*') {
        out += '.*';
        while (glob[i] === '*') i++;
      } else {
        out += '[^/]*';
        i++;
      }
    } else if (char === '?') {
      out += '[^/]';
      i++;
    } else if (char === '\\') {
      const escaped = glob[i + 1];
      if (escaped === undefined) throw new Error('ends with an unfinished "\\" escape');
      out += escapeRegExp(escaped);
      i += 2;
    } else if (char === '[') {
      const cls = translateClass(glob, i + 1);
      out += cls.source;
      i = cls.end;
    } else {
      out += escapeRegExp(char);
      i++;
    }
  }
  return out;
}

/** Splits a pattern into text and `${…}` variables, rejecting unknown or unclosed variables. */
function splitVariables(text: string): Array<string | Exclude<Part, { source: string }>> {
  const parts: Array<string | Exclude<Part, { source: string }>> = [];
  let last = 0;
  for (const found of text.matchAll(VARIABLE)) {
    const name = found[1] as string;
    parts.push(text.slice(last, found.index));
    if (SIMPLE_VARIABLES.has(name)) {
      parts.push({ variable: name as 'account' | 'name' | 'service' | 'type' });
    } else if (name.startsWith('labels:') && name.length > 'labels:'.length) {
      parts.push({ label: name.slice('labels:'.length) });
    } else {
      throw new Error(
        `uses unknown variable "\${${name}}" (known: \${account}, \${name}, \${service}, \${type}, \${labels:KEY})`,
      );
    }
    last = found.index + found[0].length;
  }
  const rest = text.slice(last);
  if (rest.includes('${')) throw new Error('has an unclosed "${"');
  parts.push(rest);
  return parts;
}

/**
 * The values of one label; own properties only, so a label key such as `constructor` never reads
 * from the object prototype.
 */
export function labelValues(labels: AclVariables['labels'], key: string): readonly string[] {
  const values = labels !== undefined && Object.hasOwn(labels, key) ? labels[key] : undefined;
  return Array.isArray(values) ? values.filter((value): value is string => typeof value === 'string') : [];
}

function variableSource(part: Exclude<Part, { source: string }>, variables: AclVariables): string {
  if ('variable' in part) return escapeRegExp(variables[part.variable]);
  return `(?:${labelValues(variables.labels, part.label).map(escapeRegExp).join('|')})`;
}

/** Compiled substitutions kept per pattern. */
const MAX_COMPILED = 1000;

/**
 * Validates and compiles one pattern (see {@link AclMatch} for the syntax).
 *
 * @throws {Error} describing the problem, e.g. `has an unclosed "["`; the caller adds the rule and field.
 * @example
 * compileAclPattern('${account}/*').matches('alice/app', { account: 'alice', name: 'alice/app', service: 's', type: 'repository', labels: undefined }); // true
 */
export function compileAclPattern(pattern: string): AclPattern {
  const isRegExp = pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/');
  const text = isRegExp ? pattern.slice(1, -1) : pattern;
  const parts: Part[] = splitVariables(text).map((part) =>
    typeof part === 'string' ? { source: isRegExp ? part : translateGlob(part) } : part,
  );
  const hasVariables = parts.some((part) => !('source' in part));

  if (!isRegExp && !hasVariables && !GLOB_SYNTAX.test(pattern)) {
    return { matches: (value) => value === pattern };
  }

  const build = (variables: AclVariables | undefined): RegExp => {
    const body = parts
      .map((part) => ('source' in part ? part.source : variables ? variableSource(part, variables) : 'x'))
      .join('');
    return new RegExp(`^(?:${body})$`);
  };
  let fixed: RegExp;
  try {
    // With variables, this checks the pattern's syntax with a stand-in value for each.
    fixed = build(undefined);
  } catch (err) {
    throw new Error(`is not a valid regular expression (${(err as Error).message})`);
  }
  if (!hasVariables) return { matches: (value) => fixed.test(value) };
  const labelKeys = parts.flatMap((part) => ('label' in part ? [part.label] : []));
  // Substituted patterns repeat (one per account for `${account}/**`): compile each body once.
  // Bounded, since the substituted values come from requests.
  const compiled = new Map<string, RegExp>();
  const regexFor = (variables: AclVariables): RegExp => {
    const body = parts.map((part) => ('source' in part ? part.source : variableSource(part, variables))).join('');
    let regex = compiled.get(body);
    if (!regex) {
      regex = new RegExp(`^(?:${body})$`);
      if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
      compiled.set(body, regex);
    }
    return regex;
  };
  return {
    matches(value, variables) {
      // A pattern naming a label the identity lacks matches nothing, even where the variable
      // sits in an optional part of a regex: a missing label never satisfies a condition.
      if (labelKeys.some((key) => labelValues(variables.labels, key).length === 0)) return false;
      return regexFor(variables).test(value);
    },
  };
}
