import type { PassThrough, Readable, Writable } from 'node:stream';
import type { ImageStoreApi, ImageUsage, StoredLayer } from '../../images/image-store-types.js';
import type { ContainerCreateBody, WaitResult } from '../../../engine-api/runtime-types.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';
import type { OutputLog } from './output-log.js';
import type { ContainerChange } from '../../../engine-api/container-operations.js';
import type { HealthConfig, HealthState } from './health-types.js';
import type { LogSettings } from './log-config.js';
import type { MountPoint } from './container-mounts.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type { NetworkConnectBody, NetworkCreateBody } from '../../../engine-api/network-operations.js';

/** An image a local runtime can run. */
export interface LocalImage {
  /** Familiar reference, e.g. `busybox:latest`. */
  ref: string;
  /** `sha256:…` identifier shown as ImageID. */
  id: string;
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  /** Bytes the image takes (the process runtime's program file). Defaults to 0. */
  size?: number;
  /** When the image was made (the program's mtime). Defaults to the runtime's start. */
  created?: Date;
  labels?: Record<string, string>;
  /** The image config's WorkingDir, User and StopSignal, applied at create when the body leaves them out. */
  workingDir?: string;
  user?: string;
  stopSignal?: string;
  /** The image's unpacked root filesystem (read-only; e.g. for /etc/passwd lookups). */
  rootfs?: string;
  /** The image config's Healthcheck, merged into the body's at create. */
  healthcheck?: HealthConfig;
  /** The image config's ExposedPorts (`80/tcp` keys), merged into the container's at create. */
  exposedPorts?: string[];
  /** The image config's Volumes (container paths): each gets an anonymous volume unless something else is mounted there. */
  volumes?: string[];
}

/** A started container process, as an executor reports it. */
export interface LocalProcess {
  pid: number;
  stdin?: Writable;
  /** Exit code (128 + signal number when killed), once all output has been delivered. */
  exited: Promise<number>;
  /** Stop reading output (back-pressure); the child blocks once its pipe is full. */
  pause(): void;
  resume(): void;
  kill(signal?: NodeJS.Signals): void;
  /** Resizes the container's terminal (Tty containers). Optional: without it resize answers 501. */
  resize?(rows: number, cols: number): void;
  /**
   * Host pids of every process of the container (for pause, top and stats). Optional: a
   * runtime whose containers are not host processes (scripted) leaves it out.
   */
  pids?(): number[];
  /** After exit: whether the kernel's OOM killer killed a process of it (a memory limit). Optional: never. */
  oomKilled?(): boolean;
  /** After exit: why the executor itself ended the container (a disk cap), shown as State.Error. Optional: none. */
  stopReason?(): string | undefined;
  /** Bytes of memory the container's cgroup uses now, when it has one (stats). Optional. */
  memoryUsage?(): number | undefined;
  /** The network this run was given, when the container has its own (inspect, ps, `docker port`). Optional: none. */
  network?: LocalNetworkSettings;
}

/** A running container's own network, as inspect's `NetworkSettings` reports it. */
export interface LocalNetworkSettings {
  /** The network's name in `NetworkSettings.Networks` (`bridge`); empty when the container is on user-defined networks only. */
  network: string;
  ipAddress: string;
  prefixLen: number;
  gateway: string;
  macAddress: string;
  /** `NetworkSettings.Ports`: each exposed port (`80/tcp`) with its host bindings, or null when not published. */
  ports: Record<string, { HostIp: string; HostPort: string }[] | null>;
  /** Its endpoints on user-defined networks, as `NetworkSettings.Networks` shows them (read live). Optional: none. */
  endpoints?: () => Record<string, Record<string, unknown>>;
}

/** An exec'd process; `resize(rows, cols)` when it runs on a TTY. */
export type LocalExecProcess = LocalProcess;

/** What an executor needs to run a command inside a running container (`docker exec`). */
export interface LocalExecRun {
  container: LocalContainer;
  argv: string[];
  /** The container's environment followed by the exec's `Env`. */
  env: string[];
  /** The exec's `User`, else the container's; empty means the container's default. */
  user: string;
  /** The exec's `WorkingDir`, else the container's; empty means the container's default. */
  workingDir: string;
  tty: boolean;
  /** Keep a stdin pipe open (the exec attached stdin). */
  stdin: boolean;
  /** `[height, width]` of the TTY. */
  consoleSize?: [number, number];
  privileged: boolean;
  output: (stream: 1 | 2, data: Buffer) => void;
}

/** A predefined network a local runtime can have (`bridge`: a network namespace of each container's own). */
export type LocalNetworkName = 'bridge' | 'host' | 'none';

/**
 * User-defined networks, for an executor that makes them (the sandbox's, on network namespaces
 * of its own): what `LocalRuntime` forwards the network routes to, and what its views ask about
 * a container's endpoints. Errors are EngineErrors with dockerd's words.
 */
export interface LocalUserNetworks {
  /** Predefined networks these serve themselves (the sandbox's shared `bridge`); the runtime shows the others. */
  readonly predefined: readonly string[];
  create(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }>;
  remove(ref: string): Promise<void>;
  prune(filters: EngineFilters): Promise<{ NetworksDeleted: string[] }>;
  /** `resolve`: a container reference (EndpointConfig.Links) to the id it names now. */
  connect(ref: string, container: LocalContainer, body: NetworkConnectBody, resolve: (ref: string) => string): Promise<void>;
  /** A new container's create-time references on its networks (legacy links), resolved once with `resolve`; throws to refuse the create. */
  created(id: string, spec: ContainerSpec, resolve: (ref: string) => string): void;
  disconnect(ref: string, container: LocalContainer, force: boolean): Promise<void>;
  /** `docker rm --link`: the container's legacy link of that alias on the default bridge is gone (its next start makes no /etc/hosts line or variables for it). */
  unlinked(id: string, alias: string): void;
  /** The user networks' `GET /networks` entries matching `filters` (the predefined ones are the runtime's). */
  list(filters: EngineFilters, containers: LocalContainer[]): Record<string, unknown>[];
  /** One user network's inspect body, or undefined when `ref` names none (full id, name, id prefix). */
  inspect(ref: string, containers: LocalContainer[]): Record<string, unknown> | undefined;
  /** A container's endpoints on user networks, as inspect's `NetworkSettings.Networks` shows them. */
  endpoints(container: Pick<LocalContainer, 'id'>): Record<string, Record<string, unknown>>;
  /** A created or exited container's `NetworkSettings.Networks`: the networks it joins at its start, with no live values. */
  stoppedEndpoints(container: Pick<LocalContainer, 'id' | 'spec' | 'startedAt'>): Record<string, Record<string, unknown>>;
}

/** Images configured under exact references (the process and scripted runtimes'): what create runs and `docker images` lists. */
export interface ExecutorImages {
  /** The image for a familiar reference, or undefined when it is not allowed/known. */
  image(ref: string): LocalImage | undefined;
  /** The images configured under an exact reference (what `docker images` lists at start). */
  list(): LocalImage[];
}

/**
 * A root filesystem of each container's own (the sandbox's copy): `docker diff`, `commit`,
 * `export` and `cp`, what a prune reclaims, and volumes filled from the image at first start.
 * Without it those routes answer 501, prune reports 0 and volumes start empty.
 */
export interface ExecutorFilesystem {
  /** `docker diff`: what changed in the container's own filesystem. */
  changes(container: LocalContainer): Promise<ContainerChange[]>;
  /** Bytes the given changes of the container take in its own filesystem (its `SizeRw`, what a prune reclaims). */
  sizeOfChanges(container: LocalContainer, changes: ContainerChange[]): Promise<number>;
  /**
   * `docker commit` and a build's RUN: stores the layer of the container's changes (as
   * {@link changes} lists them, mount points left out) in the image store, with owners as the
   * container sees them.
   */
  commitLayer(container: LocalContainer, changes: ContainerChange[], store: ImageStoreApi): Promise<StoredLayer>;
  /**
   * Copies what the container's image has at `path` (a directory; symlinks resolved inside the
   * image) into the empty volume directory `into`, owners and modes kept, before its first start
   * (dockerd's CopyImagePathContent).
   */
  copyImagePath(container: LocalContainer, path: string, into: string): Promise<void>;
  /**
   * Runs `tar`/`stat` on a container that is not running (created or exited), for `docker cp`.
   * A running one has them run inside it through the executor's `exec` (the archive routes need both).
   */
  copyOffline(container: LocalContainer, argv: string[], stdin: boolean, output: (stream: 1 | 2, data: Buffer) => void): Promise<LocalProcess>;
  /** `docker export`: a tar of the container's root filesystem copy (owners as the container sees them), streamed. */
  exportRootfs(container: LocalContainer, signal: AbortSignal): Promise<Readable>;
}

/** Resource limits the executor enforces. Without them every set field of `docker update` is refused. */
export interface ExecutorLimits {
  /**
   * `docker update`: applies the resource fields of `update` (a `POST /containers/{id}/update`
   * body, only its set fields) to the container (its running processes too), throwing a 400
   * naming any field it cannot honor; answers the HostConfig fields to keep.
   */
  update(container: LocalContainer, update: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Fields of `GET /info` the executor knows (what it can limit); merged over the runtime's own. */
  systemInfo(): Record<string, unknown>;
}

/** Named volumes (`local` driver: `<dir>/<name>/_data`), for an executor that mounts host directories (Binds). */
export interface ExecutorVolumes {
  /** Directory of the named volumes. */
  dir: string;
  /**
   * Host owner of a new volume's directory, from the labels of the volume (`docker volume
   * create`) or of the container it is made for (a name a create mentions, an anonymous volume):
   * container root under that owner's user namespace range; undefined: the server's own.
   */
  owner(labels: Readonly<Record<string, string>> | null | undefined): { uid: number; gid: number } | undefined;
}

/** A content-addressed image store behind every image operation (pull, load, save, tag, rmi, prune, list, inspect, history). */
export interface ExecutorImageStore {
  /** Opens the store, once, with the runtime's usage callback (which containers use an image). */
  open(usage: ImageUsage): Promise<ImageStoreApi>;
}

/** `docker exec` (and healthchecks): a command run inside a running container. Without it the exec routes answer 501. */
export interface ExecutorExec {
  /** Refuses an exec at its create (its error as the answer), for a running container no exec can enter; returns when any may. */
  check(c: LocalContainer): void;
  /** Runs the command; throws a 400 EngineError naming a field it cannot honor. */
  run(run: LocalExecRun): Promise<LocalExecProcess>;
}

/** `docker build` and `docker commit`, for an executor with an image store and a {@link ExecutorFilesystem}. */
export interface ExecutorBuild {
  /** Directory where builds spool their contexts and keep their layer cache. */
  dir: string;
  /** Bytes a build context may hold, uncompressed (its spool on disk is bounded by it). */
  maxContextBytes: number;
  /** `user[:group]` as ids from the passwd and group files under `rootfs` (numbers only without one): a build's `--chown`. */
  resolveUser(rootfs: string | undefined, spec: string): Promise<{ uid: number; gid: number }>;
}

/** What the executor's `start` is given. */
export interface LocalStartRun {
  argv: string[];
  env: string[];
  image: LocalImage;
  openStdin: boolean;
  /** Container id, for executors that isolate per container. */
  id: string;
  /** Its name (without the leading `/`), what its networks' DNS answers to. Optional. */
  name?: string;
  /** The container's spec as it runs (its volumes are binds of their directories here, run-spec.ts). */
  spec: ContainerSpec;
  output: (stream: 1 | 2, data: Buffer) => void;
  /** Run under a terminal (`Tty`): one raw output stream, reported as stream 1. */
  tty?: boolean;
}

/**
 * What runs containers for a local runtime: the sandbox, a host process or a script. Every
 * executor implements the core (`images`, `validate`, `start`, `removed`, `close`) in full; each
 * further capability is a small interface an executor has in full or not at all, and the runtime
 * offers the routes it backs and answers 501 (or refuses) the rest.
 */
export interface LocalExecutor {
  /** Configured images ({@link ExecutorImages}), or a content-addressed store behind every image operation ({@link ExecutorImageStore}). */
  images: ExecutorImages | ExecutorImageStore;
  /** Networks the executor's containers really have (`host`: the server's own stack; `none`: no network at all; `bridge`: their own). */
  networks: readonly LocalNetworkName[];
  /**
   * The create fields the executor honors (create-fields.ts names, `User`, `HostConfig.Binds`):
   * the router refuses a body that sets any other, naming it. Undefined: every field.
   */
  createFields?: readonly string[];
  /**
   * Directory where container records and their logs are kept (`<dir>/<id>/container.json`,
   * `output.log`) so they survive a restart. Undefined: containers live in memory only.
   */
  stateDir?: string;
  /**
   * The OCI runtime's name clients know the default runtime by (dockerd's `runc`; docker-py's
   * tests create with it and read it back): create takes it beside the runtime's own name, inspect
   * shows it when nothing else was asked, and /info lists it as the default. Undefined: the runtime's name.
   */
  ociRuntime?: string;
  /**
   * Refuses (throws a 400 EngineError naming the field) a create body the executor cannot honor.
   * `image` is the image the spec will run, with the image config already applied to it, and its
   * volumes binds of their directories.
   */
  validate(spec: ContainerSpec, image: LocalImage): void | Promise<void>;
  /** Starts the command; rejects when it cannot start. */
  start(run: LocalStartRun): Promise<LocalProcess>;
  /** Frees what the executor keeps for a removed container (e.g. its root filesystem copy). */
  removed(id: string): void;
  /** Frees what the executor keeps beyond containers (the runtime is closing, its containers have exited). */
  close(): Promise<void>;
  /** User-defined networks (`docker network create`, connect…). Without them those routes answer 501. */
  userNetworks?: LocalUserNetworks;
  /** Named volumes. Without them named volumes are refused as the executor refuses them, and the volume routes list none and answer 501 for the rest. */
  volumes?: ExecutorVolumes;
  /** `docker exec`, healthchecks. */
  exec?: ExecutorExec;
  /** Each container's own root filesystem. */
  filesystem?: ExecutorFilesystem;
  /** Resource limits (`docker update`, `/info`). */
  limits?: ExecutorLimits;
  /** Builds and commits (with an image store and {@link filesystem} only). */
  build?: ExecutorBuild;
}

/** Whether the executor's images are a content-addressed store (else configured images). */
export function hasImageStore(images: LocalExecutor['images']): images is ExecutorImageStore {
  return 'open' in images;
}

export type LocalStatus = 'created' | 'running' | 'exited' | 'removing';

/** Everything a local runtime keeps about one container. */
export interface LocalContainer {
  /** The executor's start while it is under way (status already `running`, no process yet). */
  startup?: Promise<unknown>;
  id: string;
  name: string;
  created: Date;
  image: LocalImage;
  /** The create body with what create settled (container-views.ts keptBody): kept in its record and echoed by inspect; nothing else reads it. */
  body: ContainerCreateBody;
  /** What the runtime and the executors read: the spec with the image's config applied (its `raw` is {@link body}). Set wherever `body` is. */
  spec: ContainerSpec;
  argv: string[];
  env: string[];
  tty: boolean;
  openStdin: boolean;
  autoRemove: boolean;
  labels: Record<string, string>;
  status: LocalStatus;
  /** Frozen by `docker pause` (status stays `running`, as State.Running does in dockerd). */
  paused?: boolean;
  pid: number;
  exitCode: number;
  /** The last run ended with the OOM killer killing a process of it (State.OOMKilled). */
  oomKilled?: boolean;
  error: string;
  startedAt?: Date;
  finishedAt?: Date;
  log: OutputLog;
  /** `HostConfig.LogConfig` as checked at create (absent: json-file with the default rotation). */
  logging?: LogSettings;
  stdin?: PassThrough;
  process?: LocalProcess;
  exitWaiters: Set<(result: WaitResult) => void>;
  removeWaiters: Set<(result: WaitResult) => void>;
  /** `State.Health`, once a healthcheck ran in it (kept after it exits, as dockerd keeps it). */
  health?: HealthState;
  /** Its binds and volumes as resolved at create (container-mounts.ts); absent for a runtime without volumes. */
  mounts?: MountPoint[];
  /** Restarts made by its restart policy since the user last started it (inspect's RestartCount). */
  restartCount?: number;
  /** Exited, with a restart by its policy pending (State.Restarting). */
  restarting?: boolean;
  /** The user stopped or killed it last (an `unless-stopped` container stays down, even across a server restart). */
  manuallyStopped?: boolean;
  /** Attach streams (`stream=1`) still delivering its output: an AutoRemove container waits for them, not for a fixed delay. */
  attachedStreams?: number;
  /** Called whenever one of those streams ends. */
  onDetach?: () => void;
}
