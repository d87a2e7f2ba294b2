import type { Readable } from 'node:stream';
import type { EngineFilters } from './filters.js';

/** `POST /containers/{id}/restart` options. */
export interface RestartOptions {
  /** Seconds before SIGKILL (`t`); undefined means the container's StopTimeout, else 10. */
  timeout?: number;
  /** `signal` (API ≥ 1.42): the stop signal instead of the container's own. */
  signal?: NodeJS.Signals;
}

/** `GET /containers/{id}/stats` options. */
export interface StatsOptions {
  /** `stream` (default true): one JSON object per second until the client leaves. */
  stream: boolean;
  /** `one-shot` (API ≥ 1.41, with stream=false): answer at once, without the second sample `precpu_stats` needs. */
  oneShot: boolean;
  apiVersion: string;
  signal: AbortSignal;
}

/** `GET /containers/{id}/top` answer. */
export interface TopResult {
  Titles: string[];
  Processes: string[][];
}

/** `POST /containers/prune` answer. */
export interface ContainerPruneReport {
  ContainersDeleted: string[] | null;
  SpaceReclaimed: number;
}

/** One entry of `GET /containers/{id}/changes`: Kind 0 modified, 1 added, 2 deleted. */
export interface ContainerChange {
  Path: string;
  Kind: 0 | 1 | 2;
}

/** What `X-Docker-Container-Path-Stat` carries (types.ContainerPathStat), base64 JSON on the wire. */
export interface ContainerPathStat {
  name: string;
  size: number;
  /** Go's os.FileMode bits (type bits high, permission bits low). */
  mode: number;
  mtime: string;
  linkTarget: string;
}

/** `PUT /containers/{id}/archive` options. */
export interface PutArchiveOptions {
  /** `noOverwriteDirNonDir`: refuse to replace a directory with a non-directory and vice versa. */
  noOverwriteDirNonDir: boolean;
  /** `copyUIDGID` (API ≥ 1.31): keep the archive's owners instead of the container root's. */
  copyUIDGID: boolean;
  signal: AbortSignal;
}

/**
 * Optional operations on existing containers, each behind its own route; a runtime without one
 * answers 501 naming it. Every reference is resolved as in the core methods (404 unknown).
 */
export interface ContainerOperations {
  /** Stops (as `stop`) when running, then starts again. */
  restart(ref: string, options: RestartOptions): Promise<void>;
  /** New name without the leading `/`, validated; in use → 409. */
  rename(ref: string, name: string): Promise<void>;
  /** Freezes every process of the container; not running → 409 `Container <id> is not running`, paused → 409 `Container <id> is already paused`. */
  pause(ref: string): Promise<void>;
  /** Thaws it; not paused → 409 `Container <id> is not paused`. */
  unpause(ref: string): Promise<void>;
  /** `ps` of the container's processes, `psArgs` as `ps` options (default `-ef`); not running → 409. */
  top(ref: string, psArgs: string): Promise<TopResult>;
  /** Stats JSON objects (types.StatsJSON), one per line (newline-terminated), as a byte stream. */
  stats(ref: string, options: StatsOptions): Promise<Readable>;
  /** Removes every stopped container matching `until` / `label` / `label!`. */
  pruneContainers(filters: EngineFilters, apiVersion: string): Promise<ContainerPruneReport>;
  /** Files changed in the container's filesystem against its image. */
  changes(ref: string): Promise<ContainerChange[]>;
  /** `DELETE /containers/{id}/{alias}?link=true`: removes the container's legacy link of that alias; none → 404 `No such container: <ref>/<alias>`. */
  removeLink(ref: string, alias: string): Promise<void>;
  /** `POST /containers/{id}/update`: fields it cannot honour are a 400 naming them. */
  update(ref: string, body: Record<string, unknown>): Promise<{ Warnings: string[] | null }>;
  /** The stat of a path (HEAD, and the header of GET); missing → 404 `Could not find the file <path> in container <ref>`. */
  statPath(ref: string, path: string): Promise<ContainerPathStat>;
  /** A tar of the path (`docker cp ctr:path -`), streamed. */
  getArchive(ref: string, path: string, signal: AbortSignal): Promise<{ stat: ContainerPathStat; tar: Readable }>;
  /** Extracts a tar into the directory `path` (`docker cp - ctr:path`). */
  putArchive(ref: string, path: string, tar: Readable, options: PutArchiveOptions): Promise<void>;
  /**
   * `GET /containers/{id}/export` (`docker export`): a tar of the container's whole filesystem,
   * streamed, with owners as the container sees them; rejects before any byte for an unknown one.
   */
  exportContainer(ref: string, signal: AbortSignal): Promise<Readable>;
}
