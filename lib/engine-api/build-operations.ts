import type { ContainerSpec } from './container-spec.js';
import type { Readable } from 'node:stream';
import type { ConnectCheck } from '../http/checked-fetch.js';

/** What `POST /commit` hands the runtime (query already validated by the router). */
export interface CommitContainerRequest {
  /** `container`: id, unique id prefix or name. */
  container: string;
  /** Familiar `repo:tag` to point at the new image (from `repo` and `tag`), or none. */
  ref?: string;
  /** `comment` (the history entry's and inspect's `Comment`). */
  comment?: string;
  /** `author` (the config's `author`). */
  author?: string;
  /** `pause` (defaults to true): freeze a running container while its changes are read. */
  pause: boolean;
  /** `changes`: Dockerfile instructions (CMD, ENV, …) applied to the new image's config. */
  changes: string[];
  /** The JSON body: a container config whose fields override the container's (null or absent: none). */
  config?: Record<string, unknown>;
  apiVersion: string;
}

/**
 * `POST /build`'s query parameters that become HostConfig fields of the RUN containers, with how
 * each is written: the router reads them into {@link BuildRequest.hostConfig}, and a runtime
 * that forwards the build to a real engine writes them back.
 */
export const BUILD_HOST_FIELDS: readonly (readonly [param: string, field: string, kind: 'number' | 'string' | 'json'])[] = [
  ['memory', 'Memory', 'number'], ['memswap', 'MemorySwap', 'number'], ['cpushares', 'CpuShares', 'number'],
  ['cpuperiod', 'CpuPeriod', 'number'], ['cpuquota', 'CpuQuota', 'number'], ['cpusetcpus', 'CpusetCpus', 'string'],
  ['cpusetmems', 'CpusetMems', 'string'], ['shmsize', 'ShmSize', 'number'], ['cgroupparent', 'CgroupParent', 'string'],
  ['ulimits', 'Ulimits', 'json'], ['extrahosts', 'ExtraHosts', 'string'],
];

/**
 * What `POST /build` hands the runtime. The context arrives as the client sends it (a tar, plain
 * or gzip) and is read with back-pressure; the runtime spools it under its own cap.
 */
export interface BuildRequest {
  context: Readable;
  /** `dockerfile`: path of the Dockerfile inside the context. Defaults to `Dockerfile`. */
  dockerfile: string;
  /** `t` (repeated): validated familiar `repo:tag` references. */
  tags: string[];
  /** `target`: the stage to stop at. */
  target?: string;
  nocache: boolean;
  /** `pull`: always look for a newer base image (pull before each FROM). */
  pull: boolean;
  /** `rm` (defaults to true): remove intermediate containers after a successful step. */
  rm: boolean;
  /** `forcerm`: remove intermediate containers even after a failed step. */
  forcerm: boolean;
  /** `q`: print only the final image ID. */
  quiet: boolean;
  /** `labels`: set on the final image. */
  labels: Record<string, string>;
  /** `buildargs`: values of ARGs (null: the ARG's own default or the environment's). */
  buildArgs: Record<string, string | null>;
  /** `cachefrom`: images whose steps the cache may reuse. */
  cacheFrom: string[];
  /** `networkmode` for RUN containers (`default`, `bridge`, `none`, `host`). */
  networkMode?: string;
  /** Resource limits of RUN containers, as `HostConfig` fields (Memory, CpuShares, …). */
  hostConfig: Record<string, unknown>;
  /**
   * The RUN containers' spec as the router decoded it once from the query (its `host`: {@link hostConfig}
   * with {@link networkMode}, typed): each RUN step takes its host from it. Absent (a caller
   * other than the router): decoded from {@link hostConfig} at each step.
   */
  runSpec?: ContainerSpec;
  /** Labels every RUN container gets (the caller's owner label under an ownership policy). */
  containerLabels: Record<string, string>;
  /**
   * Set under a policy: asked with the reference (familiar form) before a FROM pulls, as the
   * policy judges `docker pull`; a rejection fails the build with its message and nothing is
   * fetched. A runtime must call it before every pull a build makes.
   */
  checkPull?: (ref: string) => Promise<void>;
  /**
   * Set under a policy: asked with the name and id of each local image a FROM or `COPY --from`
   * resolves to; rejects (`No such image: <name>`) for one the caller may not see, which the
   * build must not use. A runtime that resolves images itself (dockerd) cannot ask it.
   */
  checkImage?: (ref: string, id: string) => Promise<void>;
  /** Set for a tenant under a policy: asked before each connection a FROM pull makes (see `PullRequest.connectCheck`). */
  connectCheck?: ConnectCheck;
  /** The client's `X-Registry-Config` header (credentials for FROM pulls): never logged. */
  registryConfig?: string;
  apiVersion: string;
  /** Aborted when the client goes away: the build stops and cleans up. */
  signal: AbortSignal;
}

/**
 * Optional image-making operations: a runtime with an image store it can write offers them; one
 * without answers 501 naming the feature.
 */
export interface BuildOperations {
  /** `POST /commit`: a new image from a container's changes; answers `{ Id }`. Unknown → 404. */
  commit(request: CommitContainerRequest): Promise<{ Id: string }>;
  /**
   * `POST /build` (the classic builder): resolves with dockerd's JSON message stream (bytes), which
   * the router sends as it comes; a failure after the first byte is an `errorDetail` line in it.
   */
  build(request: BuildRequest): Promise<Readable>;
}

/**
 * `POST /build`'s query decoded once, before the policy checkpoint (engineRoute's build decoder):
 * the builder's options, and the RUN containers' typed spec (no image yet) the policy judges as a
 * create's and each RUN step runs with.
 */
export interface BuildSpec {
  options: Omit<BuildRequest, 'context' | 'containerLabels' | 'registryConfig' | 'apiVersion' | 'signal' | 'runSpec'>;
  run: ContainerSpec;
}
