import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';

/** The logging drivers a local runtime has: `local` is kept as an alias of `json-file` (same files, same rotation). */
export type LocalLogDriver = 'json-file' | 'local' | 'none';

/** How a container's output is kept: its files' rotation, or nothing at all (`none`). */
export interface LogSettings {
  driver: LocalLogDriver;
  /** `HostConfig.LogConfig` as inspect shows it: the driver and the options asked for (dockerd echoes the request; the defaults apply unseen). */
  view: { Type: LocalLogDriver; Config: Record<string, string> };
  /** Rotation of the log files (absent for `none`). */
  rotation?: LogRotation;
}

/** When a log file is rotated and how many are kept. */
export interface LogRotation {
  /** Bytes a file may reach before the next one is started. */
  maxSize: number;
  /** Files kept, the current one included (older ones are deleted). */
  maxFile: number;
}

/**
 * The rotation every container gets unless its `LogConfig` says otherwise: 3 files of 10 MiB
 * (not shown in inspect, which shows what was asked, as dockerd's does).
 * dockerd's json-file default is unbounded (`max-size` -1), which fills disks; these are the
 * values Docker's own documentation suggests setting in daemon.json.
 */
export const DEFAULT_LOG_OPTIONS: Readonly<Record<'max-size' | 'max-file', string>> = { 'max-size': '10m', 'max-file': '3' };

/** Drivers dockerd has built in that a local runtime cannot ship to (it has no syslog, journald or network client). */
const DOCKERD_DRIVERS = ['syslog', 'journald', 'gelf', 'fluentd', 'awslogs', 'splunk', 'etwlogs', 'gcplogs', 'logentries'];

/** Options dockerd's json-file and local drivers know, and the ones honored here. */
const KNOWN_OPTIONS: Record<'json-file' | 'local', readonly string[]> = {
  'json-file': ['max-size', 'max-file', 'compress', 'labels', 'labels-regex', 'env', 'env-regex', 'tag'],
  local: ['max-size', 'max-file', 'compress'],
};
const HONORED_OPTIONS = ['max-size', 'max-file'];

/**
 * Reads and checks `HostConfig.LogConfig` once, at create: the driver, then each option, with
 * dockerd's words where dockerd refuses the same thing (a bad `max-size` dockerd only refuses
 * at start, with a 500; here it is a 400 at create). What dockerd would honor and this runtime
 * cannot (another driver, `compress`, `labels`…) is refused naming it. With `maxFilesBytes`,
 * a rotation whose files could hold more (`max-size` × `max-file`) is refused naming it too.
 *
 * @example
 * logSettings(containerSpecOf({ Image: 'busybox', HostConfig: { LogConfig: { Type: 'json-file', Config: { 'max-size': '1m' } } } }), 'sandbox').rotation;
 * // { maxSize: 1048576, maxFile: 3 }
 */
export function logSettings(spec: ContainerSpec, runtime: string, maxFilesBytes?: number): LogSettings {
  const { config } = spec.host.logConfig;
  const type = spec.host.logConfig.type === '' ? 'json-file' : spec.host.logConfig.type;
  if (type === 'none') {
    // The Docker CLI's own check (dockerd's API lets them through and drops them).
    if (Object.keys(config).length > 0) throw EngineError.invalidParameter('invalid logging opts for driver none');
    return { driver: 'none', view: { Type: 'none', Config: {} } };
  }
  if (type !== 'json-file' && type !== 'local') {
    if (DOCKERD_DRIVERS.includes(type)) {
      throw EngineError.invalidParameter(`HostConfig.LogConfig.Type "${type}" is not supported by the ${runtime} runtime (json-file, local or none)`);
    }
    throw EngineError.invalidParameter(`error looking up logging plugin ${type}: plugin "${type}" not found`);
  }
  for (const option of Object.keys(config)) {
    if (!KNOWN_OPTIONS[type].includes(option)) {
      throw EngineError.invalidParameter(type === 'local' ? `unknown log opt '${option}' for log driver local` : `unknown log opt '${option}' for json-file log driver`);
    }
    if (!HONORED_OPTIONS.includes(option)) throw EngineError.invalidParameter(`log opt '${option}' is not supported by the ${runtime} runtime`);
  }
  const merged = { ...DEFAULT_LOG_OPTIONS, ...config };
  const rotation = { maxSize: parseMaxSize(merged['max-size']), maxFile: parseMaxFile(merged['max-file']) };
  if (maxFilesBytes !== undefined && rotation.maxSize * rotation.maxFile > maxFilesBytes) {
    throw EngineError.invalidParameter(`HostConfig.LogConfig: max-size ${merged['max-size']} × max-file ${merged['max-file']} is more log than this server keeps per container (${maxFilesBytes} bytes, option "maxLogFilesBytes")`);
  }
  return { driver: type, view: { Type: type, Config: { ...config } }, rotation };
}

/** The settings of a record written by an earlier server (checked then): a setting no longer valid falls back to the defaults. */
export function keptLogSettings(spec: ContainerSpec, runtime: string): LogSettings {
  try {
    return logSettings(spec, runtime);
  } catch {
    return logSettings({ ...spec, host: { ...spec.host, logConfig: { type: '', config: {} } } }, runtime);
  }
}

const SIZE = /^(\d+(?:\.\d+)*) ?([kmgtp])?i?b?$/i;
const UNIT: Record<string, number> = { k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };

/**
 * `max-size` as dockerd reads it (go-units RAMInBytes: binary units, case-insensitive, an
 * optional `i`/`b`): `10m` is 10 MiB, `1.5KiB` is 1536 bytes.
 */
export function parseMaxSize(value: string): number {
  const m = SIZE.exec(value);
  const n = m ? Number.parseFloat(m[1]!) * (m[2] ? UNIT[m[2].toLowerCase()]! : 1) : NaN;
  if (!m || !Number.isFinite(n)) throw EngineError.invalidParameter(`failed to initialize logging driver: invalid size: '${value}'`);
  const bytes = Math.floor(n);
  if (bytes <= 0) throw EngineError.invalidParameter('failed to initialize logging driver: max-size must be a positive number');
  return bytes;
}

/** `max-file` as dockerd reads it (strconv.Atoi, at least 1). */
export function parseMaxFile(value: string): number {
  if (!/^[+-]?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw EngineError.invalidParameter(`failed to initialize logging driver: strconv.Atoi: parsing "${value}": invalid syntax`);
  }
  const n = Number(value);
  if (n < 1) throw EngineError.invalidParameter('failed to initialize logging driver: max-file cannot be less than 1');
  return n;
}
