import { posix } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { ImageRunConfig } from '../../images/image-store-types.js';
import { commandForm, nameValues, splitFlags } from '../dockerfile/instruction-args.js';
import { processWord, processWords, type Variables } from '../dockerfile/substitute.js';

/** A stage's image config as the instructions change it. */
export interface ConfigState {
  config: ImageRunConfig;
  /** SHELL: what the shell forms of RUN, CMD and ENTRYPOINT run with. */
  shell: string[];
  /** Whether CMD was set in this stage (an ENTRYPOINT then keeps it; else it clears the base's). */
  cmdSet: boolean;
  /** MAINTAINER: the config's `author`. */
  author?: string;
}

/** The instructions that only change the config (and so what `docker commit --change` accepts, but for SHELL, HEALTHCHECK and MAINTAINER). */
export const CONFIG_INSTRUCTIONS: ReadonlySet<string> = new Set([
  'cmd', 'entrypoint', 'env', 'expose', 'label', 'onbuild', 'stopsignal', 'user', 'volume', 'workdir', 'shell', 'healthcheck', 'maintainer',
]);

/** dockerd's `validCommitCommands`. */
export const COMMIT_INSTRUCTIONS: ReadonlySet<string> = new Set(['cmd', 'entrypoint', 'env', 'expose', 'label', 'onbuild', 'stopsignal', 'user', 'volume', 'workdir']);

/** Go's `%q` of a string list, as dockerd writes commands into history (`["cat" "/f"]`). */
export function goQuoted(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

/**
 * Applies one config instruction to the state and answers the text its history entry shows
 * after `#(nop) ` (`ENV A=1`, `CMD ["sh"]`), as dockerd's classic builder writes it.
 *
 * @example
 * applyConfigInstruction(state, 'env', 'A=$B', new Map([['B', '1']])); // 'ENV A=1'
 */
export function applyConfigInstruction(state: ConfigState, keyword: string, args: string, vars: Variables, escape = '\\'): string {
  const config = state.config;
  switch (keyword) {
    case 'env': {
      const pairs = nameValues('ENV', args, escape).map(([k, v]) => [processWord(k, vars, escape), processWord(v, vars, escape)] as const);
      let env = [...(config.Env ?? [])];
      for (const [k, v] of pairs) env = [...env.filter((e) => e.split('=')[0] !== k), `${k}=${v}`];
      config.Env = env;
      return `ENV ${pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`;
    }
    case 'label': {
      const pairs = nameValues('LABEL', args, escape).map(([k, v]) => [processWord(k, vars, escape), processWord(v, vars, escape)] as const);
      config.Labels = { ...(config.Labels ?? {}) };
      for (const [k, v] of pairs) config.Labels[k] = v;
      return `LABEL ${pairs.map(([k, v]) => `${k}=${v}`).join(' ')}`;
    }
    case 'maintainer':
      state.author = processWord(args, vars, escape);
      return `MAINTAINER ${state.author}`;
    case 'user': {
      const user = processWord(args, vars, escape);
      if (user === '') throw EngineError.invalidParameter('USER requires exactly one argument');
      config.User = user;
      return `USER ${user}`;
    }
    case 'workdir': {
      const dir = processWord(args, vars, escape);
      if (dir === '') throw EngineError.invalidParameter('WORKDIR requires exactly one argument');
      config.WorkingDir = posix.resolve('/', config.WorkingDir || '/', dir);
      return `WORKDIR ${config.WorkingDir}`;
    }
    case 'stopsignal': {
      const signal = processWord(args, vars, escape);
      if (!/^(SIG)?[A-Z0-9+-]+$/.test(signal)) throw EngineError.invalidParameter(`Invalid signal: ${signal}`);
      config.StopSignal = signal;
      return `STOPSIGNAL ${signal}`;
    }
    case 'expose': {
      const ports = processWords(args, vars, escape).flatMap(expandPort);
      config.ExposedPorts = { ...(config.ExposedPorts ?? {}) };
      for (const port of ports) config.ExposedPorts[port] = {};
      return `EXPOSE ${ports.join(' ')}`;
    }
    case 'volume': {
      const form = commandForm(args);
      const volumes = 'exec' in form ? form.exec.map((v) => processWord(v, vars, escape)) : processWords(form.shell, vars, escape);
      if (volumes.length === 0 || volumes.some((v) => v.trim() === '')) throw EngineError.invalidParameter('VOLUME specified can not be an empty string');
      config.Volumes = { ...(config.Volumes ?? {}) };
      for (const v of volumes) config.Volumes[v] = {};
      return `VOLUME ${goQuoted(volumes)}`;
    }
    case 'cmd': {
      config.Cmd = commandOf(state, args);
      state.cmdSet = true;
      return `CMD ${goQuoted(config.Cmd)}`;
    }
    case 'entrypoint': {
      const form = commandForm(args);
      config.Entrypoint = 'exec' in form ? form.exec : form.shell === '' ? null : [...state.shell, form.shell];
      // dockerd: an ENTRYPOINT drops a CMD the stage did not set itself (the base image's).
      if (!state.cmdSet) config.Cmd = null;
      return `ENTRYPOINT ${goQuoted(config.Entrypoint ?? [])}`;
    }
    case 'shell': {
      const form = commandForm(args);
      if (!('exec' in form)) throw EngineError.invalidParameter('SHELL requires the arguments to be in JSON form');
      if (form.exec.length === 0) throw EngineError.invalidParameter('SHELL requires at least one argument');
      state.shell = form.exec;
      config.Shell = form.exec;
      return `SHELL ${goQuoted(form.exec)}`;
    }
    case 'healthcheck':
      config.Healthcheck = healthcheck(state, args);
      return `HEALTHCHECK ${args}`;
    case 'onbuild': {
      const trigger = args.trim();
      const word = (/^\S+/.exec(trigger)?.[0] ?? '').toUpperCase();
      if (word === 'ONBUILD') throw EngineError.invalidParameter('Chaining ONBUILD via `ONBUILD ONBUILD` isn\'t allowed');
      if (word === 'FROM' || word === 'MAINTAINER') throw EngineError.invalidParameter(`${word} isn't allowed as an ONBUILD trigger`);
      if (word === '') throw EngineError.invalidParameter('ONBUILD requires at least one argument');
      const text = `${word}${trigger.slice(word.length)}`;
      config.OnBuild = [...((config.OnBuild as string[] | null | undefined) ?? []), text];
      return `ONBUILD ${text}`;
    }
    default:
      throw EngineError.invalidParameter(`${keyword} is not a config instruction`);
  }
}

function commandOf(state: ConfigState, args: string): string[] {
  const form = commandForm(args);
  return 'exec' in form ? form.exec : [...state.shell, form.shell];
}

/** `80`, `80/udp`, `8000-8002/tcp` → `80/tcp` …, as dockerd's nat.ParsePortSpecs. */
function expandPort(spec: string): string[] {
  const [range = '', proto = 'tcp'] = spec.split('/');
  const m = /^(\d+)(?:-(\d+))?$/.exec(range);
  const start = Number(m?.[1]);
  const end = m?.[2] !== undefined ? Number(m[2]) : start;
  if (!m || start > 65535 || end > 65535 || end < start) throw EngineError.invalidParameter(`Invalid containerPort: ${range}`);
  if (!['tcp', 'udp', 'sctp'].includes(proto.toLowerCase())) throw EngineError.invalidParameter(`Invalid proto: ${proto}`);
  const out: string[] = [];
  for (let p = start; p <= end; p++) out.push(`${p}/${proto.toLowerCase()}`);
  return out;
}

const DURATION = /^(?:(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns))+$/;
const UNIT_NS: Record<string, number> = { h: 3.6e12, m: 6e10, s: 1e9, ms: 1e6, us: 1e3, 'µs': 1e3, ns: 1 };

/** Go's time.ParseDuration, in nanoseconds (HEALTHCHECK's flags). */
function durationNs(flag: string, value: string): number {
  if (value === '0') return 0;
  if (!DURATION.test(value)) throw EngineError.invalidParameter(`time: invalid duration "${value}" (--${flag})`);
  let total = 0;
  for (const part of value.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(part[1]) * (UNIT_NS[part[2] as string] as number);
  return Math.round(total);
}

function healthcheck(state: ConfigState, args: string): Record<string, unknown> {
  const { flags, rest } = splitFlags(args, ['interval', 'timeout', 'start-period', 'start-interval', 'retries']);
  const word = (/^\S+/.exec(rest)?.[0] ?? '').toUpperCase();
  if (word === 'NONE') {
    if (rest.trim().length > 4 || flags.size > 0) throw EngineError.invalidParameter('HEALTHCHECK NONE takes no arguments');
    return { Test: ['NONE'] };
  }
  if (word !== 'CMD') throw EngineError.invalidParameter(`Unknown type "${word}" in HEALTHCHECK (try CMD)`);
  const form = commandForm(rest.trim().slice(3));
  const out: Record<string, unknown> = { Test: 'exec' in form ? ['CMD', ...form.exec] : ['CMD-SHELL', form.shell] };
  const durations: [string, string][] = [['interval', 'Interval'], ['timeout', 'Timeout'], ['start-period', 'StartPeriod'], ['start-interval', 'StartInterval']];
  for (const [flag, field] of durations) {
    const value = flags.get(flag);
    if (value !== undefined) out[field] = durationNs(flag, value);
  }
  const retries = flags.get('retries');
  if (retries !== undefined) {
    if (!/^\d+$/.test(retries) || Number(retries) < 1) throw EngineError.invalidParameter('--retries must be at least 1');
    out.Retries = Number(retries);
  }
  void state;
  return out;
}
