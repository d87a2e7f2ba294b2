import { EngineError } from '../../../engine-api/engine-error.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';
import type { ExecCreateBody, ExecStartOptions } from '../../../engine-api/exec-operations.js';
import { execSpecOf, type ExecSpec } from '../../../engine-api/exec-spec.js';

/**
 * Decodes an exec create body (types.ExecConfig) once into its typed {@link ExecSpec}. dockerd answers a missing command with 400
 * `No exec command specified`; a wrongly typed field fails its JSON decode (400) and so does it
 * here, naming the field; so does a NUL byte in Cmd, Env, User or WorkingDir (they reach an argv
 * or a path, which cannot hold one). `ConsoleSize` is dropped below API 1.42 as dockerd's route does.
 *
 * @example
 * parseExecCreate({ Cmd: ['ls'] }, '1.41').cmd; // ['ls']
 */
export function parseExecCreate(raw: unknown, version: string): ExecSpec {
  if (raw === undefined) throw EngineError.invalidParameter('got EOF while reading request body');
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw EngineError.invalidParameter('exec config must be a JSON object');
  const body = canonicalFields(raw as Record<string, unknown>);
  const cmd = body.Cmd;
  if (cmd === undefined || cmd === null || (Array.isArray(cmd) && cmd.length === 0)) throw EngineError.invalidParameter('No exec command specified');
  if (!isStringList(cmd)) throw EngineError.invalidParameter('Cmd must be a list of strings');
  if (body.Env !== undefined && body.Env !== null && !isStringList(body.Env)) throw EngineError.invalidParameter('Env must be a list of strings');
  // execve takes C strings: a NUL can reach neither the argv, the environment nor a path.
  rejectNul('Cmd', cmd);
  if (isStringList(body.Env)) rejectNul('Env', body.Env);
  for (const field of ['AttachStdin', 'AttachStdout', 'AttachStderr', 'Tty', 'Privileged'] as const) {
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'boolean') throw EngineError.invalidParameter(`${field} must be a boolean`);
  }
  for (const field of ['User', 'WorkingDir', 'DetachKeys'] as const) {
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'string') throw EngineError.invalidParameter(`${field} must be a string`);
    if (typeof body[field] === 'string') rejectNul(field, [body[field] as string]);
  }
  if (!apiVersionAtLeast(version, '1.42')) delete body.ConsoleSize;
  else if (body.ConsoleSize !== undefined && body.ConsoleSize !== null) body.ConsoleSize = consoleSize(body.ConsoleSize);
  return execSpecOf(body as ExecCreateBody);
}

/** types.ExecConfig's fields, which dockerd's JSON decode matches whatever their case. */
const EXEC_FIELDS = ['User', 'Privileged', 'Tty', 'ConsoleSize', 'AttachStdin', 'AttachStderr', 'AttachStdout', 'Detach', 'DetachKeys', 'Env', 'WorkingDir', 'Cmd'];

/**
 * The body with its keys as types.ExecConfig spells them: Go's encoding/json takes a key that
 * differs only in case (docker-py sends the config file's `detachKeys` so), the later key
 * winning when two name one field. Other keys are kept as they are.
 */
function canonicalFields(raw: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    body[EXEC_FIELDS.find((f) => f.toLowerCase() === key.toLowerCase()) ?? key] = value;
  }
  return body;
}

/** The exec start body (types.ExecStartCheck): `Detach`, `Tty`, and `ConsoleSize` from 1.42. */
export function parseExecStart(raw: unknown, version: string): ExecStartOptions {
  const body = (raw ?? {}) as Record<string, unknown>;
  if (typeof body !== 'object' || Array.isArray(body)) throw EngineError.invalidParameter('exec start config must be a JSON object');
  for (const field of ['Detach', 'Tty'] as const) {
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'boolean') throw EngineError.invalidParameter(`${field} must be a boolean`);
  }
  const size = apiVersionAtLeast(version, '1.42') && body.ConsoleSize !== undefined && body.ConsoleSize !== null ? consoleSize(body.ConsoleSize) : undefined;
  return { detach: body.Detach === true, tty: body.Tty === true, ...(size ? { consoleSize: size } : {}), apiVersion: version };
}

function consoleSize(value: unknown): [number, number] {
  if (!Array.isArray(value) || value.length !== 2 || !value.every((n) => Number.isInteger(n) && n >= 0 && n <= 65535)) {
    throw EngineError.invalidParameter('ConsoleSize must be [height, width] with numbers from 0 to 65535');
  }
  return [value[0] as number, value[1] as number];
}

function rejectNul(field: string, values: readonly string[]): void {
  if (values.some((v) => v.includes('\u0000'))) throw EngineError.invalidParameter(`invalid ${field}: a value holds a NUL byte`);
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}
