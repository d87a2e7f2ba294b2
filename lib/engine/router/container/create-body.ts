import { EngineError } from '../../../engine-api/engine-error.js';
import { checkLabels, jsonKind } from '../http/labels-body.js';

function mistyped(field: string, value: unknown, goType: string): EngineError {
  return EngineError.invalidParameter(`json: cannot unmarshal ${jsonKind(value)} into Go struct field ContainerConfigWrapper.${field} of type ${goType}`);
}

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/** A NUL can reach neither argv nor the environment of a process (execve takes C strings). */
function rejectNul(field: string, values: readonly string[]): void {
  if (values.some((v) => v.includes('\u0000'))) throw EngineError.invalidParameter(`invalid ${field}: a value holds a NUL byte`);
}

/**
 * Checks the JSON types of the `POST /containers/create` fields dockgate reads, the way dockerd's
 * decoder does before anything runs: Image and the string fields are strings, Cmd/Entrypoint a
 * string or a list of strings (Go's strslice), Env a list of strings, Labels a string → string
 * map, the flags booleans, HostConfig an object; no NUL byte in what reaches an argv or a path
 * (Cmd, Entrypoint, Env, WorkingDir, User, Hostname, Domainname, Volumes, Binds, Tmpfs, Mounts).
 * `null` means "not set", as in Go. dockerd
 * answers a type mismatch with 500 (its decoder error is unclassified); it is the client's
 * input, so this is a 400 with the same words. Other fields pass through untouched.
 *
 * @throws {EngineError} InvalidParameter naming the field.
 * @example
 * checkCreateBody({ Image: 'busybox', Env: 'A=1' }); // throws: … ContainerConfigWrapper.Env of type []string
 */
export function checkCreateBody(body: Record<string, unknown>): void {
  const image = body.Image;
  if (image !== undefined && image !== null && typeof image !== 'string') throw mistyped('Image', image, 'string');
  for (const field of ['Cmd', 'Entrypoint'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value === 'string') rejectNul(field, [value]);
    else if (isStringList(value)) rejectNul(field, value);
    else throw mistyped(field, Array.isArray(value) ? value.find((v) => typeof v !== 'string') : value, 'string');
  }
  const env = body.Env;
  if (env !== undefined && env !== null) {
    if (!Array.isArray(env)) throw mistyped('Env', env, '[]string');
    if (!isStringList(env)) throw mistyped('Env', env.find((v) => typeof v !== 'string'), 'string');
    rejectNul('Env', env);
  }
  checkLabels(body.Labels, 'ContainerConfigWrapper');
  for (const field of ['Tty', 'OpenStdin', 'StdinOnce', 'AttachStdin', 'AttachStdout', 'AttachStderr'] as const) {
    const value = body[field];
    if (value !== undefined && value !== null && typeof value !== 'boolean') throw mistyped(field, value, 'bool');
  }
  for (const field of ['WorkingDir', 'User', 'Hostname', 'Domainname'] as const) {
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw mistyped(field, value, 'string');
    rejectNul(field, [value]);
  }
  const volumes = body.Volumes;
  if (volumes && typeof volumes === 'object') rejectNul('Volumes', Object.keys(volumes));
  const host = body.HostConfig;
  if (host !== undefined && host !== null) {
    if (typeof host !== 'object' || Array.isArray(host)) throw mistyped('HostConfig', host, 'container.HostConfig');
    const autoRemove = (host as Record<string, unknown>).AutoRemove;
    if (autoRemove !== undefined && autoRemove !== null && typeof autoRemove !== 'boolean') {
      throw mistyped('HostConfig.AutoRemove', autoRemove, 'bool');
    }
    rejectNulInPaths(host as Record<string, unknown>);
  }
}

/**
 * The HostConfig strings that become paths or mount arguments (Binds, Tmpfs paths and options,
 * Mounts' Source and Target): a NUL there would reach a system call or an argv, which cannot hold
 * one. Their other checks (types, shapes) are the runtime's.
 */
function rejectNulInPaths(host: Record<string, unknown>): void {
  const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
  rejectNul('HostConfig.Binds', strings(host.Binds));
  const tmpfs = host.Tmpfs;
  if (tmpfs && typeof tmpfs === 'object' && !Array.isArray(tmpfs)) {
    rejectNul('HostConfig.Tmpfs', [...Object.keys(tmpfs), ...Object.values(tmpfs).filter((v): v is string => typeof v === 'string')]);
  }
  if (Array.isArray(host.Mounts)) {
    for (const mount of host.Mounts as unknown[]) {
      if (!mount || typeof mount !== 'object') continue;
      const { Source, Target } = mount as { Source?: unknown; Target?: unknown };
      rejectNul('HostConfig.Mounts', [Source, Target].filter((v): v is string => typeof v === 'string'));
    }
  }
}
