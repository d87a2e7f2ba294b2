import { EngineError } from '../../../engine-api/engine-error.js';

/**
 * A v1 image JSON (a pre-1.10 `docker save` layer's `json`) made a v2 image config as dockerd
 * 20.10 makes it (moby image/v1/imagev1.go MakeConfigFromV1Config, with the fallback it takes for
 * images of an older Docker): the JSON read as its V1Image struct and written again (so unknown
 * keys go, `config` and `container_config` are container.Config with its omitempty fields, times
 * in Go's form), then `id`, `parent` and `Size` dropped and `rootfs` and `history` added, keys
 * sorted. Written with {@link goJson}, the image id is the one dockerd gives the same layer.
 */

const bad = (why: string) => EngineError.invalidParameter(`invalid image archive: ${why}`);

/** V1Image's string fields kept (omitempty), by JSON key. */
const V1_STRINGS = ['comment', 'container', 'docker_version', 'author', 'architecture', 'variant', 'os'] as const;

function str(v: unknown, where: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw bad(`${where} is not a string`);
  return v;
}

function strings(v: unknown, where: string): string[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.some((e) => typeof e !== 'string')) throw bad(`${where} is not a list of strings`);
  return [...(v as string[])];
}

/** strslice.StrSlice: a string is a one-element list. */
function strslice(v: unknown, where: string): string[] | null {
  return typeof v === 'string' ? [v] : strings(v, where);
}

/** A Go map written with sorted keys; `value` maps each value. */
function sortedMap(v: unknown, where: string, value: (e: unknown, k: string) => unknown): Record<string, unknown> | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(`${where} is not an object`);
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, value((v as Record<string, unknown>)[k], k)]));
}

/** Go's time.Time in JSON (RFC 3339 with the fraction's trailing zeros dropped); the zero time when none. */
function goTime(v: unknown, where: string): string {
  if (v === undefined || v === null || v === '') return '0001-01-01T00:00:00Z';
  const m = typeof v === 'string' ? /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(v) : null;
  if (!m) throw bad(`${where} is not a time`);
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  return `${m[1]}${fraction ? `.${fraction}` : ''}${m[3] === '+00:00' ? 'Z' : m[3]}`;
}

const isSet = (v: unknown) => v !== undefined && v !== null;

/** Go's int64 (time.Duration, int) from JSON: a whole number; null or absent is zero. */
function goInt(v: unknown, where: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw bad(`${where} is not an integer`);
  return v;
}

/** container.HealthConfig (API 1.41) as Go decodes and writes it: unknown keys dropped, each field omitempty. */
function healthConfig(v: unknown, where: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(`${where} is not an object`);
  const h = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const test = strings(h.Test, `${where}.Test`);
  if (test && test.length > 0) out.Test = test;
  for (const key of ['Interval', 'Timeout', 'StartPeriod', 'Retries'] as const) {
    const n = goInt(h[key], `${where}.${key}`);
    if (n !== 0) out[key] = n;
  }
  return out;
}

/** container.Config (API 1.41) as Go writes it: every field in order, the omitempty ones only when set. */
function containerConfig(v: unknown, where: string): Record<string, unknown> {
  if (v !== undefined && v !== null && (typeof v !== 'object' || Array.isArray(v))) throw bad(`${where} is not an object`);
  const c = (v ?? {}) as Record<string, unknown>;
  const bool = (k: string) => c[k] === true;
  const out: Record<string, unknown> = {
    Hostname: str(c.Hostname, `${where}.Hostname`), Domainname: str(c.Domainname, `${where}.Domainname`), User: str(c.User, `${where}.User`),
    AttachStdin: bool('AttachStdin'), AttachStdout: bool('AttachStdout'), AttachStderr: bool('AttachStderr'),
  };
  const ports = sortedMap(c.ExposedPorts, `${where}.ExposedPorts`, () => ({}));
  if (ports && Object.keys(ports).length > 0) out.ExposedPorts = ports;
  Object.assign(out, { Tty: bool('Tty'), OpenStdin: bool('OpenStdin'), StdinOnce: bool('StdinOnce'), Env: strings(c.Env, `${where}.Env`), Cmd: strslice(c.Cmd, `${where}.Cmd`) });
  if (isSet(c.Healthcheck)) out.Healthcheck = healthConfig(c.Healthcheck, `${where}.Healthcheck`);
  if (bool('ArgsEscaped')) out.ArgsEscaped = true;
  Object.assign(out, {
    Image: str(c.Image, `${where}.Image`),
    Volumes: sortedMap(c.Volumes, `${where}.Volumes`, () => ({})),
    WorkingDir: str(c.WorkingDir, `${where}.WorkingDir`),
    Entrypoint: strslice(c.Entrypoint, `${where}.Entrypoint`),
  });
  if (bool('NetworkDisabled')) out.NetworkDisabled = true;
  if (str(c.MacAddress, `${where}.MacAddress`) !== '') out.MacAddress = c.MacAddress;
  out.OnBuild = strings(c.OnBuild, `${where}.OnBuild`);
  out.Labels = sortedMap(c.Labels, `${where}.Labels`, (e, k) => str(e, `${where}.Labels.${k}`));
  if (str(c.StopSignal, `${where}.StopSignal`) !== '') out.StopSignal = c.StopSignal;
  if (typeof c.StopTimeout === 'number') out.StopTimeout = c.StopTimeout;
  const shell = strslice(c.Shell, `${where}.Shell`);
  if (shell && shell.length > 0) out.Shell = shell;
  return out;
}

/** image.History as Go writes it. */
function historyEntry(created: string, author: string, createdBy: string, comment: string): Record<string, unknown> {
  return { created, ...(author ? { author } : {}), ...(createdBy ? { created_by: createdBy } : {}), ...(comment ? { comment } : {}) };
}

/**
 * The v2 config of a v1 layer whose image has `diffIds` (its ancestors' and its own) and whose
 * parent's history is `parentHistory`; also the history its children start from.
 */
export function v1Config(v1: Record<string, unknown>, diffIds: readonly string[], parentHistory: readonly Record<string, unknown>[]): { config: Record<string, unknown>; history: Record<string, unknown>[] } {
  const fields: Record<string, unknown> = {};
  for (const key of V1_STRINGS) {
    const value = str(v1[key], key);
    if (value !== '') fields[key] = value;
  }
  const created = goTime(v1.created, 'created');
  fields.created = created;
  const containerConfigValue = containerConfig(v1.container_config, 'container_config');
  fields.container_config = containerConfigValue;
  if (isSet(v1.config)) fields.config = containerConfig(v1.config, 'config');
  const createdBy = ((containerConfigValue.Cmd as string[] | null) ?? []).join(' ');
  const history = [...parentHistory, historyEntry(created, str(v1.author, 'author'), createdBy, str(v1.comment, 'comment'))];
  fields.rootfs = { type: 'layers', diff_ids: [...diffIds] };
  fields.history = history;
  const config = Object.fromEntries(Object.keys(fields).sort().map((k) => [k, fields[k]]));
  return { config, history };
}

/** JSON as Go's encoding/json writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped. */
export function goJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
