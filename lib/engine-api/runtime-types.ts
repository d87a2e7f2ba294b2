import type { Readable } from 'node:stream';
import type { EngineFilters } from './filters.js';
import type { ConnectCheck } from '../http/checked-fetch.js';
import type { RegistryLoginRequest, RegistryLoginResult } from './registry-login-types.js';
import type { SystemOperations } from './system-operations.js';
import type { ImageOperations } from './image-operations.js';
import type { NetworkManagementOperations, NetworkOperations } from './network-operations.js';
import type { VolumeOperations } from './volume-operations.js';
import type { ExecOperations } from './exec-operations.js';
import type { ContainerOperations } from './container-operations.js';
import type { BuildOperations } from './build-operations.js';
import type { ContainerCreateBody, ContainerSpec } from './container-spec.js';

export type { ContainerCreateBody } from './container-spec.js';
import type { OutputStream, AttachSession } from './output-stream.js';

export type { OutputStream, AttachSession } from './output-stream.js';

/** What the router hands a runtime to create a container. */
export interface CreateRequest {
  /** The `name` query parameter, already validated; undefined lets the runtime pick one. */
  name?: string;
  /** The body decoded once by the router: what policies and runtimes read. */
  spec: ContainerSpec;
  /** The body as sent (after the version shims): only a forwarding runtime's writer reads it. */
  body: ContainerCreateBody;
  /** The API version the request is served at (for version-dependent shims). */
  apiVersion: string;
}

/** `POST /containers/{id}/wait` conditions (API ≥ 1.30; older requests use `not-running`). */
export type WaitCondition = 'not-running' | 'next-exit' | 'removed';

/** The wait answer, as dockerd writes it. */
export interface WaitResult {
  StatusCode: number;
  Error: { Message: string } | null;
}

/**
 * A registered wait. The runtime resolves the outer promise once the container is found and the
 * wait is in place (so the router can send 200 before the container is even started, which the
 * Go client needs from API 1.30), then `result` when the condition is met.
 */
export interface WaitHandle {
  result: Promise<WaitResult>;
}

/** Options of `GET /containers/{id}/logs` (already parsed and validated by the router). */
export interface LogsOptions {
  stdout: boolean;
  stderr: boolean;
  follow: boolean;
  timestamps: boolean;
  /** Lines from the end; undefined means all. */
  tail?: number;
  /** Milliseconds since the epoch. */
  since?: number;
  /** Milliseconds since the epoch. */
  until?: number;
  signal?: AbortSignal;
}

/** Options of `POST /containers/{id}/attach`. */
export interface AttachOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  /** `logs=1`: replay earlier output before the live stream. */
  logs: boolean;
  /** `stream=1`: keep following live output. */
  stream: boolean;
}

/** A lifecycle event in dockerd's `/events` shape (events.Message). */
export interface EngineEvent {
  status?: string;
  id?: string;
  from?: string;
  Type: string;
  Action: string;
  Actor: { ID: string; Attributes: Record<string, string> };
  scope?: string;
  time: number;
  timeNano: number;
}

/** Options of `GET /events`. */
export interface EventsOptions {
  /** Milliseconds since the epoch: replay kept events from then. */
  since?: number;
  /** Milliseconds since the epoch: stop at this time. */
  until?: number;
  filters: EngineFilters;
  signal: AbortSignal;
}

/** Options of `GET /containers/json`. */
export interface ListOptions {
  all: boolean;
  limit?: number;
  filters: EngineFilters;
}

/** Options of `DELETE /containers/{id}`. */
export interface RemoveOptions {
  force: boolean;
  volumes: boolean;
}

/** What the router hands a runtime to pull an image (`POST /images/create?fromImage=…`). */
export interface PullRequest {
  /** The image in familiar form with its tag or digest (`nope:1`), already validated. */
  ref: string;
  /** Repository path as a registry names it (`library/busybox`), for progress messages. */
  path: string;
  /** The tag, or the digest of a digest reference. */
  tagOrDigest: string;
  /** `fromImage` and `tag` as the client sent them, for a runtime that forwards the request. */
  fromImage: string;
  tag?: string;
  /** `os[/arch[/variant]]` (honoured from API 1.32). */
  platform?: string;
  /** The client's `X-Registry-Auth` header, passed on untouched; a credential, never log it. */
  registryAuth?: string;
  /** The API version the request is served at. */
  apiVersion: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /**
   * Set for a tenant under a policy: asked before each connection the pull makes (the registry,
   * a redirect, a token realm) with the address the host resolved to; a reason refuses it (403).
   * The local runtimes' registry client applies it; the Docker runtime's dockerd connects itself.
   */
  connectCheck?: ConnectCheck;
}

/** Options of `POST /containers/{id}/stop`. */
export interface StopOptions {
  /**
   * Seconds between the stop signal and SIGKILL (`t`); negative waits for the exit however
   * long it takes. Undefined means the container's `StopTimeout`, else 10 (dockerd's default).
   */
  timeout?: number;
  /** `signal` (API ≥ 1.42): sent instead of the container's stop signal. */
  signal?: NodeJS.Signals;
}

/**
 * What `engineRouter` drives. The methods declared here are the required core (the container
 * lifecycle); each optional feature group lives in its own interface under `operations/`
 * ({@link SystemOperations}, {@link ImageOperations}, {@link NetworkOperations},
 * {@link VolumeOperations}, {@link ExecOperations}, {@link ContainerOperations}) and any of its methods may be left out: its route then answers 501
 * `<feature> is not supported by the <name> runtime`. Every method takes the id, unique id prefix or name the client
 * sent and resolves it itself; failures are thrown as `EngineError` (NotFound → 404 and so on).
 * Inspect and list return dockerd's JSON shapes, which the router sends as they are.
 *
 * Implementations: `processRuntime` (child processes of allow-listed images), `dockerRuntime`
 * (a real engine behind a socket), `scriptedRuntime` (in memory, for tests).
 *
 * @example
 * const runtime: ContainerRuntime = scriptedRuntime({ images: { 'busybox:latest': () => ({ stdout: 'hi\n' }) } });
 */
export interface ContainerRuntime
  extends Partial<SystemOperations>,
    Partial<ImageOperations>,
    Partial<NetworkOperations>,
    NetworkManagementOperations,
    Partial<VolumeOperations>,
    Partial<ExecOperations>,
    Partial<ContainerOperations>,
    Partial<BuildOperations> {
  /**
   * The runtime's name in messages (`scripted`, `process`, `docker`): a route whose optional
   * operation the runtime lacks answers 501 `<feature> is not supported by the <name> runtime`.
   * Defaults to `custom` when a host's runtime leaves it out.
   */
  readonly name?: string;
  /**
   * The create fields this runtime honors (names of create-fields.ts' `CREATE_FIELDS`, as
   * `User` or `HostConfig.Binds`): the router refuses a create that sets any other with one 400
   * `<field> is not supported by the <name> runtime`, so nothing is accepted and dropped.
   * Undefined: every field reaches `create` (a runtime that forwards the body, or checks it itself).
   */
  readonly createFields?: readonly string[];
  /** Creates a container; unknown image → 404 `No such image: <ref>`, name in use → 409. */
  create(request: CreateRequest): Promise<{ id: string; warnings: string[] }>;
  /** Starts it; already running → NotModified (304). */
  start(id: string): Promise<void>;
  /** Registers a wait (see {@link WaitHandle}). */
  wait(id: string, condition: WaitCondition, signal?: AbortSignal): Promise<WaitHandle>;
  /** The container's output as a stream with back-pressure. */
  logs(id: string, options: LogsOptions): Promise<OutputStream>;
  /** Attaches to live output (and stdin). */
  attach(id: string, options: AttachOptions): Promise<AttachSession>;
  /** `GET /containers/{id}/json` body. */
  inspect(id: string): Promise<Record<string, unknown>>;
  /** `GET /containers/json` body. */
  list(options: ListOptions): Promise<Record<string, unknown>[]>;
  /** Removes it; running without `force` → 409. */
  remove(id: string, options: RemoveOptions): Promise<void>;
  /**
   * Sends a signal to a running container (`docker kill`, and the CLI's `--sig-proxy`
   * forwarding Ctrl-C as `INT`). Not running → 409
   * `Cannot kill container: <ref>: Container <id> is not running`; unknown → 404
   * `Cannot kill container: <ref>: No such container: <ref>` (dockerd's words). For SIGKILL it
   * resolves once the container has exited, as dockerd does. Without it the route answers 501.
   */
  kill?(id: string, signal: NodeJS.Signals): Promise<void>;
  /**
   * Stops a running container: its stop signal (SIGTERM unless the create body's `StopSignal`
   * says otherwise), then SIGKILL after the timeout; resolves once it has exited. Not running
   * → NotModified (304). Without it the route answers 501.
   */
  stop?(id: string, options: StopOptions): Promise<void>;
  /**
   * `POST /auth` (`docker login` with DOCKER_HOST set): checks the credentials against the
   * registry as dockerd does and answers `{Status: 'Login Succeeded', IdentityToken?}`; refused →
   * 401 with the registry's reason. The body is a credential: never log or echo it. Without it
   * the route answers 501. `connectCheck`, as a pull's, is asked before each connection.
   */
  login?(request: RegistryLoginRequest, options?: { connectCheck?: ConnectCheck }): Promise<RegistryLoginResult>;
  /**
   * Resizes a running container's terminal (`POST /containers/{id}/resize?h=&w=`, which the
   * Docker CLI sends for `docker run -it` at start and on every SIGWINCH). Not running → 409; a
   * container without a terminal ignores it, as dockerd does. Without it the route answers 501.
   */
  resize?(id: string, size: { height: number; width: number }): Promise<void>;
  /**
   * Pulls an image (`POST /images/create`, what the Docker CLI calls when create answered
   * `No such image`). Resolves with dockerd's JSON-lines progress (bytes, one JSON object per
   * line), streamed to the client as it comes; rejects with an EngineError before any output
   * when the pull cannot start (a missing image is a 404). Without it the route answers 501.
   */
  pull?(request: PullRequest): Promise<Readable>;
  /** Lifecycle events (object-mode Readable of {@link EngineEvent}), subscribed before it resolves. */
  events(options: EventsOptions): Promise<Readable>;
  /** Releases resources (kills children, closes sockets). */
  close?(): Promise<void>;
}
