/**
 * The versioned Docker Engine API: `engineRouter` in front of a `ContainerRuntime`, the
 * runtimes, the pure protocol pieces (version gate, stdcopy framing, query parsing) and the
 * serving helpers.
 */
export { engineRouter } from './router/engine-router.js';
export type { EngineRouterOptions } from './router/options.js';
export { listenEngine, type ListenEngineOptions, type EngineListener } from './listen/listen-engine.js';
export type { TcpCallerPolicy } from './listen/tcp-caller-policy.js';
export { handleEngineUpgrades } from './listen/handle-upgrades.js';
export * from './policy/index.js';

export { EngineError, ENGINE_ERROR_STATUS, type EngineErrorKind } from './errors/engine-error.js';
export { writeEngineError, writeEngineJson } from './errors/write-engine-error.js';
export { writeEngineAuthError } from './errors/write-engine-auth-error.js';

export { compareApiVersions, apiVersionLessThan, apiVersionAtLeast, isApiVersion, minApiVersion } from './version/api-version.js';
export { ENGINE_RELEASES } from './version/engine-releases.js';
export { resolveVersionRange, DEFAULT_VERSION_RANGE, type VersionRange, type VersionRangeInput } from './version/version-range.js';
export { gateApiVersion } from './version/version-gate.js';

export { boolValue, queryString, parseTail, parseTimestamp, parseInteger, parseFilters, type EngineFilters } from './http/query.js';
export { parseSignal } from './http/signal.js';
export { parsePullReference, type PullReference } from './http/pull-reference.js';
export {
  encodeFrame, frameHeader, FrameDecoder, demultiplex, STREAM_STDIN, STREAM_STDOUT, STREAM_STDERR, STREAM_SYSTEMERR,
  type Frame, type StreamType,
} from './stream/stdcopy.js';

export type {
  ContainerRuntime, ContainerCreateBody, CreateRequest, WaitCondition, WaitResult, WaitHandle, LogsOptions, OutputStream,
  AttachOptions, AttachSession, EngineEvent, EventsOptions, ListOptions, RemoveOptions, PullRequest, StopOptions,
} from './runtime/types.js';
export { processRuntime, type ProcessRuntimeOptions, type ProcessImage } from './runtime/process/process-runtime.js';
export { sandboxRuntime, type SandboxRuntimeOptions } from './runtime/sandbox/sandbox-runtime.js';
export { scriptedRuntime, type ScriptedRuntimeOptions, type ScriptedImage, type ScriptRun, type ScriptResult } from './runtime/scripted/scripted-runtime.js';
export { dockerRuntime, type DockerRuntimeOptions } from './runtime/docker/docker-runtime.js';
export { familiarImageRef } from './runtime/local/image-ref.js';
export type { SystemOperations, DiskUsageOptions } from './runtime/operations/system-operations.js';
export {
  loadedImageLines,
  type ImageOperations, type ImageListOptions, type ImageRemoveOptions, type ImageDeleteItem, type ImagePruneReport, type ImageLoadRequest,
} from './runtime/operations/image-operations.js';
export type { NetworkOperations, NetworkInspectOptions } from './runtime/operations/network-operations.js';
export type { VolumeOperations, VolumeCreateBody, VolumePruneReport } from './runtime/operations/volume-operations.js';
export { ImageStore, type CommitRequest } from './images/image-store.js';
export { decodeRegistryAuth, type PullCredentials } from './images/registry/registry-auth.js';
export type {
  ImageStoreApi, ImageStoreOptions, ImageUsage, ImagePullRequest, ImageRemoveOptions as ImageStoreRemoveOptions, ImageDeleteEntry, ImagePruneResult,
  ImageRecord, ImageConfigBlob, ImageRunConfig, ImageHistoryEntry, ResolvedImage, StoredLayer,
} from './images/image-store-types.js';
