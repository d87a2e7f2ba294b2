import { posix } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ImageRunConfig } from '../image-store-types.js';

/** The Dockerfile instructions dockerd applies on import and commit (builder/dockerfile: validCommitCommands). */
const VALID = new Set(['cmd', 'entrypoint', 'env', 'expose', 'healthcheck', 'label', 'onbuild', 'user', 'volume', 'workdir']);

/** Go durations as HEALTHCHECK options take them (`30s`, `1m30s`, `500ms`), in nanoseconds. */
const DURATION_UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/**
 * Applies `docker import --change` lines (each one Dockerfile instruction) to an image config,
 * as dockerd does: CMD, ENTRYPOINT, ENV, EXPOSE, HEALTHCHECK, LABEL, ONBUILD, USER, VOLUME and
 * WORKDIR; any other instruction is refused in dockerd's words (`run is not a valid change
 * command`). Written here rather than taken from a Dockerfile parser package because only these
 * ten one-line forms apply, and the exec/shell distinction is all of their grammar.
 *
 * @example
 * applyChanges({}, ['CMD ["sh"]', 'ENV A=b', 'EXPOSE 80']); // { Cmd: ['sh'], Env: ['A=b'], ExposedPorts: { '80/tcp': {} } }
 */
export function applyChanges(base: ImageRunConfig, changes: readonly string[]): ImageRunConfig {
  const config: ImageRunConfig = { ...base };
  for (const line of changes) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [, keyword = '', rest = ''] = /^(\S+)\s*(.*)$/s.exec(trimmed) ?? [];
    const instruction = keyword.toLowerCase();
    if (!VALID.has(instruction)) throw EngineError.invalidParameter(`${instruction} is not a valid change command`);
    const args = rest.trim();
    switch (instruction) {
      case 'cmd':
        config.Cmd = commandOf(args);
        break;
      case 'entrypoint':
        config.Entrypoint = commandOf(args);
        break;
      case 'env':
        config.Env = mergeEnv(config.Env ?? [], pairs(args, 'ENV'));
        break;
      case 'label':
        config.Labels = { ...(config.Labels ?? {}), ...Object.fromEntries(pairs(args, 'LABEL').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)])) };
        break;
      case 'expose':
        config.ExposedPorts = { ...(config.ExposedPorts ?? {}), ...Object.fromEntries(words(args).flatMap(ports).map((p) => [p, {}])) };
        break;
      case 'user':
        if (args === '') throw EngineError.invalidParameter('USER requires exactly one argument');
        config.User = args;
        break;
      case 'workdir':
        if (args === '') throw EngineError.invalidParameter('WORKDIR requires exactly one argument');
        config.WorkingDir = posix.resolve(config.WorkingDir || '/', args);
        break;
      case 'volume': {
        const paths = jsonArray(args) ?? words(args);
        if (paths.length === 0) throw EngineError.invalidParameter('VOLUME requires at least one argument');
        config.Volumes = { ...(config.Volumes ?? {}), ...Object.fromEntries(paths.map((p) => [p, {}])) };
        break;
      }
      case 'onbuild': {
        const inner = /^(\S+)/.exec(args)?.[1]?.toUpperCase();
        if (!inner) throw EngineError.invalidParameter('ONBUILD requires at least one argument');
        if (inner === 'ONBUILD') throw EngineError.invalidParameter("Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed");
        if (inner === 'FROM' || inner === 'MAINTAINER') throw EngineError.invalidParameter(`${inner} isn't allowed as an ONBUILD trigger`);
        config.OnBuild = [...((config.OnBuild as string[] | undefined) ?? []), args];
        break;
      }
      case 'healthcheck':
        config.Healthcheck = healthcheckOf(args);
        break;
    }
  }
  return config;
}

/** Exec form (a JSON array of strings) as given; shell form runs under `/bin/sh -c`. */
function commandOf(args: string): string[] {
  return jsonArray(args) ?? ['/bin/sh', '-c', args];
}

function jsonArray(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  try {
    const parsed: unknown = JSON.parse(args);
    if (Array.isArray(parsed) && parsed.every((a) => typeof a === 'string')) return parsed as string[];
  } catch {
    // Not JSON: the shell form, as the Dockerfile parser falls back to it.
  }
  return undefined;
}

/** Words split on blanks, a double- or single-quoted run kept whole (quotes removed). */
function words(args: string): string[] {
  const out: string[] = [];
  const re = /(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|((?:[^\s"'\\]|\\.)+))+/g;
  for (const m of args.matchAll(re)) {
    out.push(m[0].replace(/"((?:[^"\\]|\\.)*)"|'([^']*)'|\\(.)/g, (_all, dq?: string, sq?: string, esc?: string) => (dq !== undefined ? dq.replace(/\\(.)/g, '$1') : sq ?? esc ?? '')));
  }
  return out;
}

/** `key=value …`, or the legacy `key value with spaces` form of a single pair. */
function pairs(args: string, instruction: string): string[] {
  const parts = words(args);
  if (parts.length === 0) throw EngineError.invalidParameter(`${instruction} requires at least one argument`);
  if (!parts[0]!.includes('=')) {
    const [, key = '', value = ''] = /^(\S+)\s+(.*)$/s.exec(args) ?? [];
    if (key === '' || value === '') throw EngineError.invalidParameter(`${instruction} must have two arguments`);
    return [`${key}=${value.trim()}`];
  }
  for (const p of parts) {
    if (!p.includes('=') || p.startsWith('=')) throw EngineError.invalidParameter(`${instruction} names can not be blank`);
  }
  return parts;
}

function mergeEnv(env: readonly string[], added: readonly string[]): string[] {
  const out = [...env];
  for (const entry of added) {
    const name = entry.slice(0, entry.indexOf('='));
    const at = out.findIndex((e) => e.slice(0, e.indexOf('=')) === name);
    if (at >= 0) out[at] = entry;
    else out.push(entry);
  }
  return out;
}

/** `80`, `80/udp`, `8000-8002/tcp` as ExposedPorts keys. */
function ports(spec: string): string[] {
  const m = /^(\d+)(?:-(\d+))?(?:\/(tcp|udp|sctp))?$/i.exec(spec);
  if (!m) throw EngineError.invalidParameter(`Invalid containerPort: ${spec}`);
  const first = Number(m[1]);
  const last = m[2] !== undefined ? Number(m[2]) : first;
  if (first < 1 || last > 65535 || last < first) throw EngineError.invalidParameter(`Invalid containerPort: ${spec}`);
  const proto = (m[3] ?? 'tcp').toLowerCase();
  return Array.from({ length: last - first + 1 }, (_, i) => `${first + i}/${proto}`);
}

/** `NONE`, or `[--interval=…] [--timeout=…] [--start-period=…] [--retries=…] CMD …`. */
function healthcheckOf(args: string): Record<string, unknown> {
  if (args.toUpperCase() === 'NONE') return { Test: ['NONE'] };
  const check: Record<string, unknown> = {};
  let rest = args;
  for (;;) {
    const flag = /^--([a-z-]+)=(\S+)\s*(.*)$/s.exec(rest);
    if (!flag) break;
    const [, name = '', value = '', after = ''] = flag;
    rest = after;
    if (name === 'retries') {
      if (!/^\d+$/.test(value)) throw EngineError.invalidParameter(`invalid value for retries: ${value}`);
      check.Retries = Number(value);
      continue;
    }
    const field = { interval: 'Interval', timeout: 'Timeout', 'start-period': 'StartPeriod' }[name];
    if (!field) throw EngineError.invalidParameter(`Unknown flag: ${name}`);
    check[field] = duration(value);
  }
  const [, keyword = '', command = ''] = /^(\S+)\s*(.*)$/s.exec(rest) ?? [];
  if (keyword.toUpperCase() !== 'CMD' || command.trim() === '') throw EngineError.invalidParameter(`Unknown type "${keyword}" in HEALTHCHECK (try CMD)`);
  const exec = jsonArray(command.trim());
  check.Test = exec ? ['CMD', ...exec] : ['CMD-SHELL', command.trim()];
  return check;
}

function duration(value: string): number {
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) throw EngineError.invalidParameter(`time: invalid duration "${value}"`);
  return Math.round(parts.reduce((sum, p) => sum + Number(p[1]) * DURATION_UNITS[p[2]!]!, 0));
}
