/**
 * `POST /containers/{id}/exec` body (types.ExecConfig), kept as sent. `Env` arrived in API 1.25
 * and `WorkingDir` in 1.35 (version history); dockerd honours both whatever the request's
 * version, and so does dockgate. `ConsoleSize` (1.42) is dropped below 1.42 by the router, as
 * dockerd's exec route does.
 */
export interface ExecCreateBody {
  Cmd: string[];
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  Tty?: boolean;
  Env?: string[] | null;
  User?: string;
  WorkingDir?: string;
  Privileged?: boolean;
  DetachKeys?: string;
  /** `[height, width]` of the TTY. */
  ConsoleSize?: [number, number] | null;
  [field: string]: unknown;
}

/**
 * `POST /containers/{id}/exec`'s body (types.ExecConfig), decoded once on the route side
 * (router/exec/exec-body.ts): its keys matched whatever their case (Go's JSON decode), types
 * checked, `ConsoleSize` dropped below API 1.42. Policies and runtimes read this; only the Docker
 * runtime's writer reads `raw`.
 */
export interface ExecSpec {
  cmd: readonly string[];
  /** The exec's own `Env` (the container's is added by the runtime). */
  env: readonly string[];
  /** `''`: the container's user. */
  user: string;
  /** `''`: the container's working directory. */
  workingDir: string;
  tty: boolean;
  privileged: boolean;
  attachStdin: boolean;
  /** Undefined when the body left the field out (the output is then streamed, as the CLI asks). */
  attachStdout?: boolean;
  attachStderr?: boolean;
  /** `''`: the default (ctrl-p,ctrl-q under a TTY). */
  detachKeys: string;
  /** `[height, width]` of the TTY (API ≥ 1.42). */
  consoleSize?: [number, number];
  /** The body with its keys as types.ExecConfig spells them, for a runtime that forwards it. */
  raw: ExecCreateBody;
}

/**
 * The typed exec spec of a body whose fields are already checked and canonically spelled.
 *
 * @example
 * execSpecOf({ Cmd: ['ls'], Tty: true }).tty; // true
 */
export function execSpecOf(body: ExecCreateBody): ExecSpec {
  return {
    cmd: body.Cmd,
    env: body.Env ?? [],
    user: body.User ?? '',
    workingDir: body.WorkingDir ?? '',
    tty: body.Tty === true,
    privileged: body.Privileged === true,
    attachStdin: body.AttachStdin === true,
    ...(typeof body.AttachStdout === 'boolean' ? { attachStdout: body.AttachStdout } : {}),
    ...(typeof body.AttachStderr === 'boolean' ? { attachStderr: body.AttachStderr } : {}),
    detachKeys: body.DetachKeys ?? '',
    ...(Array.isArray(body.ConsoleSize) ? { consoleSize: body.ConsoleSize } : {}),
    raw: body,
  };
}
