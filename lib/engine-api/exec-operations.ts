import type { AttachSession } from './output-stream.js';
import type { ExecSpec } from './exec-spec.js';

export type { ExecCreateBody } from './exec-spec.js';

/** `POST /exec/{id}/start` (types.ExecStartCheck), already validated. */
export interface ExecStartOptions {
  /** Start and answer at once; output is discarded. */
  detach: boolean;
  /**
   * The start body's `Tty`: whether the output is raw (true) or stdcopy frames (false), as
   * dockerd decides it. Whether the command gets a terminal is the create body's `Tty`.
   */
  tty: boolean;
  /** `[height, width]` (API ≥ 1.42). */
  consoleSize?: [number, number];
  apiVersion: string;
}

/**
 * Optional exec operations (`docker exec`, docker-py's `exec_run`, testcontainers' `exec`).
 * Exec ids are 64 hex characters; an unknown one is 404 `No such exec instance: <id>`.
 */
export interface ExecOperations {
  /**
   * Registers an exec instance in a running container; 409 `Container <id> is not running`
   * (or `… is paused, unpause the container before exec`), 404 for an unknown container. The
   * body comes decoded once, typed (`ExecSpec`).
   */
  createExec(containerRef: string, spec: ExecSpec, apiVersion: string): Promise<{ id: string }>;
  /**
   * Starts it. Detached: resolves undefined once the command runs. Attached: the session whose
   * output (stdcopy frames unless the start body's Tty is set) ends when the command has exited and all
   * its output was delivered; `stdin` when the exec attached stdin. Already started → 409.
   */
  startExec(id: string, options: ExecStartOptions): Promise<AttachSession | undefined>;
  /** `GET /exec/{id}/json` (types.ContainerExecInspect). */
  inspectExec(id: string, apiVersion: string): Promise<Record<string, unknown>>;
  /** `POST /exec/{id}/resize`: the TTY's new size. An exec without a TTY, or not running, ignores it (dockerd answers 200 too). */
  resizeExec(id: string, size: { height: number; width: number }): Promise<void>;
}
