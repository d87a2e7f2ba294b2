/**
 * `dockgate/engine`: the versioned Docker Engine API, `engineRouter` in front of a
 * `ContainerRuntime`, the serving helpers and the shared vocabulary (errors, versions, stdcopy
 * framing, runtime types). Each runtime family is its own entry (`dockgate/engine/sandbox`,
 * `/process`, `/scripted`, `/docker`) and so is the image store (`dockgate/engine/images`).
 */
export { engineRouter } from './router/engine-router.js';
export type { EngineRouterOptions } from './router/options.js';
export { listenEngine, type ListenEngineOptions, type EngineListener } from './listen/listen-engine.js';
export { appPrototypes, type AppPrototypes, type ExpressPrototypes } from './listen/app-prototypes.js';
export type { TcpCallerPolicy } from './listen/tcp-caller-policy.js';
export { handleEngineUpgrades } from './listen/handle-upgrades.js';
export * from './policy/index.js';

export { EngineError, ENGINE_ERROR_STATUS, type EngineErrorKind } from '../engine-api/engine-error.js';
export { writeEngineError } from './errors/write-engine-error.js';
export { writeEngineAuthError } from './errors/write-engine-auth-error.js';

export { compareApiVersions, apiVersionLessThan, apiVersionAtLeast, isApiVersion, minApiVersion } from '../engine-api/api-version.js';
export { ENGINE_RELEASES } from '../engine-api/engine-releases.js';
export { resolveVersionRange, DEFAULT_VERSION_RANGE, type VersionRange, type VersionRangeInput } from '../engine-api/version-range.js';
export { gateApiVersion } from './router/http/version-gate.js';

export type { EngineFilters } from '../engine-api/filters.js';
export { encodeFrame, FrameDecoder, demultiplex, type Frame, type StreamType } from '../engine-api/stdcopy.js';
export { StdcopyFramingError } from '../engine-api/stdcopy-error.js';
export { EngineListenError } from './listen/listen-error.js';
export { SlowEventsSubscriberError } from './runtime/local/events-error.js';

export type {
  ContainerRuntime, ContainerCreateBody, CreateRequest, WaitCondition, WaitResult, WaitHandle, LogsOptions, OutputStream,
  AttachOptions, AttachSession, EngineEvent, EventsOptions, ListOptions, RemoveOptions, PullRequest, StopOptions,
} from '../engine-api/runtime-types.js';
export { containerSpecOf, type ContainerSpec, type HostSpec, type MountSpec, type BindSpec, type PortBindingSpec, type EndpointSpec } from '../engine-api/container-spec.js';
export { execSpecOf, type ExecSpec, type ExecCreateBody } from '../engine-api/exec-spec.js';
export { CREATE_FIELDS, createFieldsExcept, UNHONORED_HOST_FIELDS } from '../engine-api/create-fields.js';
export { familiarImageRef } from '../engine-api/image-ref.js';
export type { SystemOperations, DiskUsageOptions } from '../engine-api/system-operations.js';
export {
  loadedImageLines,
  type ImageOperations, type ImageListOptions, type ImageRemoveOptions, type ImageDeleteItem, type ImagePruneReport, type ImageLoadRequest, type PushRequest,
} from '../engine-api/image-operations.js';
export type { NetworkOperations, NetworkInspectOptions, NetworkManagementOperations, NetworkCreateBody, NetworkConnectBody } from '../engine-api/network-operations.js';
export type { VolumeOperations, VolumeCreateBody, VolumePruneReport } from '../engine-api/volume-operations.js';
export type { BuildOperations, BuildRequest, CommitContainerRequest } from '../engine-api/build-operations.js';
export { decodeRegistryAuth, type PullCredentials } from './images/registry/registry-auth.js';
