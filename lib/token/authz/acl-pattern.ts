import { compileGlob, literalPieces, parseGlob, type GlobAutomaton, type GlobPiece } from './glob-automaton.js';

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

type Variable = { variable: 'account' | 'name' | 'service' | 'type' } | { label: string };
type Part = { source: string } | Variable;

const VARIABLE = /\$\{([^}]*)\}/g;
const SIMPLE_VARIABLES = new Set(['account', 'name', 'service', 'type']);
// Characters that make a glob more than a literal string.
const GLOB_SYNTAX = /[*?[\\]/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Splits a pattern into text and `${…}` variables, rejecting unknown or unclosed variables. */
function splitVariables(text: string): Array<string | Variable> {
  const parts: Array<string | Variable> = [];
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

function variableSource(part: Variable, variables: AclVariables): string {
  if ('variable' in part) return escapeRegExp(variables[part.variable]);
  return `(?:${labelValues(variables.labels, part.label).map(escapeRegExp).join('|')})`;
}

/** Compiled substitutions kept per pattern. */
const MAX_COMPILED = 1000;

/** The pieces of a variable's value in a glob: literal text, or any one of a label's values. */
function variablePieces(part: Variable, variables: AclVariables): GlobPiece[] {
  if ('variable' in part) return literalPieces(variables[part.variable]);
  return [{ kind: 'either', options: labelValues(variables.labels, part.label) }];
}

/**
 * Substituted patterns repeat (one per account for `${account}/**`): each is compiled once, in a
 * cache bounded since the substituted values come from requests.
 */
function cached<T>(keyOf: (variables: AclVariables) => string, compile: (variables: AclVariables) => T): (variables: AclVariables) => T {
  const compiled = new Map<string, T>();
  return (variables) => {
    const key = keyOf(variables);
    let value = compiled.get(key);
    if (value === undefined) {
      value = compile(variables);
      if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
      compiled.set(key, value);
    }
    return value;
  };
}

/**
 * Validates and compiles one pattern (see {@link AclMatch} for the syntax). A glob becomes an
 * automaton matched in linear time (glob-automaton.ts); a `/regex/` stays a JavaScript RegExp,
 * the operator's own, with values substituted escaped.
 *
 * @throws {Error} describing the problem, e.g. `has an unclosed "["`; the caller adds the rule and field.
 * @example
 * compileAclPattern('${account}/*').matches('alice/app', { account: 'alice', name: 'alice/app', service: 's', type: 'repository', labels: undefined }); // true
 */
export function compileAclPattern(pattern: string): AclPattern {
  const isRegExp = pattern.length >= 2 && pattern.startsWith('/') && pattern.endsWith('/');
  const text = isRegExp ? pattern.slice(1, -1) : pattern;
  const split = splitVariables(text);
  const hasVariables = split.some((part) => typeof part !== 'string');

  if (!isRegExp && !hasVariables && !GLOB_SYNTAX.test(pattern)) {
    return { matches: (value) => value === pattern };
  }
  const labelKeys = split.flatMap((part) => (typeof part !== 'string' && 'label' in part ? [part.label] : []));
  // A pattern naming a label the identity lacks matches nothing, even where the variable sits in
  // an optional part of a regex: a missing label never satisfies a condition.
  const lacksLabel = (variables: AclVariables) => labelKeys.some((key) => labelValues(variables.labels, key).length === 0);
  // The values a match depends on, as one cache key.
  const keyOf = (variables: AclVariables) => JSON.stringify(split.map((part) => (typeof part === 'string' ? 0
    : 'variable' in part ? variables[part.variable] : labelValues(variables.labels, part.label))));

  if (!isRegExp) {
    // Syntax is checked here, once: the glob text does not depend on the request.
    const globs = split.map((part) => (typeof part === 'string' ? parseGlob(part) : part));
    const build = (variables: AclVariables): GlobAutomaton =>
      compileGlob(globs.flatMap((part) => (Array.isArray(part) ? part : variablePieces(part as Variable, variables))));
    if (!hasVariables) {
      const automaton = compileGlob(globs.flat() as GlobPiece[]);
      return { matches: (value) => automaton.matches(value) };
    }
    const automatonFor = cached(keyOf, build);
    return {
      matches(value, variables) {
        if (lacksLabel(variables)) return false;
        return automatonFor(variables).matches(value);
      },
    };
  }

  const parts: Part[] = split.map((part) => (typeof part === 'string' ? { source: part } : part));
  const body = (variables: AclVariables | undefined) => parts
    .map((part) => ('source' in part ? part.source : variables ? variableSource(part, variables) : 'x'))
    .join('');
  let fixed: RegExp;
  try {
    // With variables, this checks the pattern's syntax with a stand-in value for each.
    fixed = new RegExp(`^(?:${body(undefined)})$`);
  } catch (err) {
    throw new Error(`is not a valid regular expression (${(err as Error).message})`);
  }
  if (!hasVariables) return { matches: (value) => fixed.test(value) };
  const regexFor = cached(keyOf, (variables) => new RegExp(`^(?:${body(variables)})$`));
  return {
    matches(value, variables) {
      if (lacksLabel(variables)) return false;
      return regexFor(variables).test(value);
    },
  };
}
