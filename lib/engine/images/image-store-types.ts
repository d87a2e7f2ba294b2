import type { Readable } from 'node:stream';
import type { EngineFilters } from '../../engine-api/filters.js';
import type { LoadNameCheck } from '../../engine-api/image-operations.js';
import type { RegistryLoginRequest, RegistryLoginResult } from '../../engine-api/registry-login-types.js';
import type { ConnectCheck } from '../../http/checked-fetch.js';
import type { Header as Headers } from 'tar-stream';

/**
 * The part of an OCI image config (image-spec config.md `config`) a runtime applies at create.
 * Field names are the spec's (which are also dockerd's `ContainerConfig` names).
 */
export interface ImageRunConfig {
  User?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Env?: string[];
  Entrypoint?: string[] | null;
  Cmd?: string[] | null;
  Volumes?: Record<string, Record<string, never>>;
  WorkingDir?: string;
  Labels?: Record<string, string> | null;
  StopSignal?: string;
  [field: string]: unknown;
}

/** One `history` entry of an image config. */
export interface ImageHistoryEntry {
  created?: string;
  created_by?: string;
  author?: string;
  comment?: string;
  empty_layer?: boolean;
}

/** The image config blob (image-spec config.md), as stored; its sha256 is the image ID. */
export interface ImageConfigBlob {
  created?: string;
  author?: string;
  architecture: string;
  os: string;
  variant?: string;
  config?: ImageRunConfig;
  rootfs: { type: 'layers'; diff_ids: string[] };
  history?: ImageHistoryEntry[];
  [field: string]: unknown;
}

/** A layer as the store keeps it: an uncompressed tar named by its diff ID. */
export interface StoredLayer {
  /** `sha256:…` of the uncompressed tar (the config's `rootfs.diff_ids` entry). */
  diffId: string;
  /** Bytes of the uncompressed tar. */
  size: number;
}

/** One member of a layer being made: a tar header and, for a regular file, where its bytes are. */
export interface LayerEntry {
  header: Partial<Headers> & { name: string };
  /** Host path of a regular file's content (read when the entry is written). */
  source?: string;
  /** In-memory content (small files the builder makes). */
  body?: Buffer;
  /** Content read as the entry is written, exactly `header.size` bytes (a file read from a descriptor already open). */
  content?: AsyncIterable<Buffer>;
}

/** What the store knows about one image. */
export interface ImageRecord {
  /** `sha256:…` of the config blob: dockerd's image ID. */
  id: string;
  /** Familiar `name:tag` references pointing at it (`busybox:latest`, `127.0.0.1:5000/alice/x:1`). */
  repoTags: string[];
  /** `name@sha256:…` manifest digests it was pulled by. */
  repoDigests: string[];
  layers: StoredLayer[];
  /** The image it was built or committed on (dockerd's `Parent`): a build's intermediate images are its chain. */
  parent?: string;
  /** ISO time the image was last tagged (dockerd's `Metadata.LastTagTime`). */
  lastTagTime?: string;
}

/** An image ready to run: the config to apply and the unpacked root filesystem. */
export interface ResolvedImage {
  id: string;
  /** The familiar reference it was resolved from, or the ID when resolved by ID. */
  ref: string;
  config: ImageConfigBlob;
  /**
   * The unpacked root filesystem: a directory the store owns. READ-ONLY for everyone else: a
   * container must run on its own copy ({@link ImageStoreApi.materialize}); the store never
   * changes it once written (it is replaced only by deleting the image).
   */
  rootfs: string;
}

/** A pull (`POST /images/create?fromImage=…`), the engine's PullRequest fields the store needs. */
export interface ImagePullRequest {
  /** Familiar reference with tag or digest (`busybox:latest`, `127.0.0.1:5000/alice/x@sha256:…`). */
  ref: string;
  /** `os[/arch[/variant]]`; defaults to the server's platform. */
  platform?: string;
  /** The client's `X-Registry-Auth` header (base64url JSON); a credential, never logged. */
  registryAuth?: string;
  signal?: AbortSignal;
  /** Asked before each connection to the registry, its redirects and its token realm (a tenant's, under a policy). */
  connectCheck?: ConnectCheck;
}

/** A push (`POST /images/{name}/push?tag=…`). */
export interface ImagePushRequest {
  /** The repository as the client named it (`127.0.0.1:5000/alice/x`), possibly with a tag. */
  name: string;
  /** The `tag` parameter; none (and no tag in `name`) pushes every local tag of the repository. */
  tag?: string;
  /** The client's `X-Registry-Auth` header (base64url JSON); a credential, never logged. */
  registryAuth?: string;
  signal?: AbortSignal;
  /** Asked before each connection to the registry, its redirects and its token realm (a tenant's, under a policy). */
  connectCheck?: ConnectCheck;
}

/** `DELETE /images/{name}` options. */
export interface ImageRemoveOptions {
  /** Untag every reference / delete even when a stopped container uses it (dockerd's `force`). */
  force?: boolean;
  /**
   * dockerd's `noprune` (keep untagged parent images). Honoured trivially: images in this store
   * have no parent images (every image carries its whole layer list), so there is nothing to prune.
   */
  noprune?: boolean;
}

/** dockerd's `DELETE /images/{name}` answer entries. */
export type ImageDeleteEntry = { Untagged: string } | { Deleted: string };

/** Who uses an image: the runtime's answer to the store, so remove/prune can refuse a conflict. */
export interface ImageUsage {
  /** Container IDs using the image, with whether each is running. */
  (imageId: string): { id: string; running: boolean }[];
}

/** `POST /images/prune` answer. */
export interface ImagePruneResult {
  ImagesDeleted: ImageDeleteEntry[] | null;
  SpaceReclaimed: number;
}

/** Options of `ImageStore.open`. */
export interface ImageStoreOptions {
  /** Registries (`host[:port]`) spoken to over plain HTTP besides 127.0.0.0/8 and localhost. Defaults to none. */
  insecureRegistries?: string[];
  /** Containers using each image (for rmi/prune conflicts). Defaults to none using any image. */
  usage?: ImageUsage;
  /** The fetch implementation for registries. Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** The platform pulls pick by default (`linux/amd64`). Defaults to this server's. */
  platform?: string;
  /** Bytes a `docker load` archive may hold, uncompressed (and so what its spool takes on disk). Defaults to 4 GiB. */
  maxLoadBytes?: number;
  /** Bytes one pulled or loaded layer may hold, uncompressed. Defaults to 4 GiB. */
  maxLayerBytes?: number;
  /**
   * The store cannot give files other owners (a rootless server, which maps one id: its own as
   * container root): an image whose layers hold a file owned by anyone but 0:0 fails to unpack,
   * naming the file, rather than having its owners dropped. Defaults to false.
   */
  onlyRootOwners?: boolean;
  /**
   * A rootless server with a subordinate range mapped (its user namespace): layers are unpacked
   * as the server's user, each entry's owner recorded, and the finished root handed to
   * {@link NamespaceOwners.apply}, which gives the entries their owners inside the namespace;
   * copies and removals of such roots run there too. Defaults to none.
   */
  namespaceOwners?: NamespaceOwners;
  /**
   * The user namespace ranges each new image's root is prepared for as soon as it is unpacked
   * (in the background, after the pull, load or import answers), so that the first container of
   * the image on such a range does not wait for it. Defaults to none.
   */
  prepareShifts?: () => readonly IdShift[];
}

/**
 * A user namespace's host range a root filesystem is prepared for: container uid n is host uid
 * `uid + n` (gid likewise), for n below `size`.
 */
export interface IdShift {
  uid: number;
  gid: number;
  size: number;
}

/** Owners recorded while a layer is unpacked (apply-layer.ts): path relative to the root ('' for the root) -> [uid, gid] as the image says. */
export type OwnerTable = Map<string, readonly [number, number]>;

/** How a rootless store with a mapped user namespace gives its roots their owners (store option `namespaceOwners`). */
export interface NamespaceOwners {
  /** How many ids the namespace maps (0 to size - 1): an owner beyond is refused, naming the file. */
  readonly size: number;
  /** Gives the entries of the finished, unpacked `root` the owners of `owners`, inside the namespace (entries not in it stay root's). */
  apply(root: string, owners: OwnerTable): Promise<void>;
  /** Runs `argv` as the namespace's root (a copy or a removal of a root holding its ids' files); rejects when it fails. */
  run(argv: readonly string[]): Promise<void>;
}

/** The surface a runtime builds on (implemented by `ImageStore`). */
export interface ImageStoreApi {
  /** The image for a reference, an ID or unique ID prefix; undefined when unknown. */
  resolve(ref: string): Promise<ResolvedImage | undefined>;
  /**
   * Copies the image's root filesystem into `destDir` (created; must not exist) for one
   * container; with `shift`, from its copy prepared once for that user namespace range.
   */
  materialize(imageId: string, destDir: string, shift?: IdShift): Promise<void>;
  /** The image's unpacked root filesystem (with `shift`, the one prepared for that range), read-only (for `docker diff`). Optional. */
  imageRootfs?(imageId: string, shift?: IdShift): Promise<string>;
  /**
   * Builds the busybox image from busybox-static (deterministic: same binary, same ID) and tags it
   * with those of `tags` (default `busybox:latest`) that name no image yet. Answers its ID.
   */
  seedBusybox(tags?: string[]): Promise<string>;
  /** `docker login` (`POST /auth`) against a registry, with the store's insecure-registry rules. Optional. */
  login?(request: RegistryLoginRequest, options?: { connectCheck?: ConnectCheck }): Promise<RegistryLoginResult>;
  /** Pulls; resolves with dockerd's JSON-lines progress (bytes). Rejects before output when it cannot start. */
  pull(request: ImagePullRequest): Promise<Readable>;
  /**
   * `docker push`: resolves with dockerd's JSON-lines progress; an unknown image (404) or a bad
   * name or header (400) rejects before any output, a registry's refusal ends the stream. Optional.
   */
  push?(request: ImagePushRequest): Promise<Readable>;
  /**
   * `docker load`: a docker-archive (or OCI layout) tar, spooled to disk, never buffered; resolves
   * with dockerd's JSON-lines messages (`Loaded image: …`) once everything is imported; a broken
   * archive rejects (400) before any output. `signal` abandons the load; `checkNames` is asked
   * with the names the store parsed before any tag is written.
   */
  load(archive: Readable, options?: { signal?: AbortSignal; checkNames?: LoadNameCheck }): Promise<Readable>;
  /**
   * `docker import`: a plain or gzip tar as the one layer of a new image, its config from the
   * `changes` (Dockerfile lines; an invalid one is a 400 before any byte is read); answers the
   * image ID. Optional: a store without it answers 501 for imports.
   */
  import?(tar: Readable, options: { tags: string[]; message?: string; source: string; changes: readonly string[] }): Promise<string>;
  /** `docker save`: a docker-archive tar of the named images, streamed; unknown → 404 before any byte. */
  save(refs: string[], signal?: AbortSignal): Promise<Readable>;
  tag(source: string, repo: string, tag?: string): Promise<void>;
  remove(ref: string, options?: ImageRemoveOptions): Promise<ImageDeleteEntry[]>;
  /** `POST /images/prune` with its filters (`dangling` defaulting to true, `until`, `label`, `label!`). */
  prune(filters?: EngineFilters): Promise<ImagePruneResult>;
  /**
   * `GET /images/json` body with its filters (`dangling`, `label`, `reference`, `before`, `since`, `until`);
   * without `all`, untagged images that are another image's parent (a build's intermediate steps) are left out, as dockerd does.
   */
  list(filters?: EngineFilters, all?: boolean): Promise<Record<string, unknown>[]>;
  /** `GET /images/{name}/json` body; 404 when unknown. */
  inspect(ref: string): Promise<Record<string, unknown>>;
  /** `GET /images/{name}/history` body; 404 when unknown. */
  history(ref: string): Promise<Record<string, unknown>[]>;
  /** The config blob of a stored image (by ID), without unpacking its root. Optional. */
  config?(imageId: string): Promise<ImageConfigBlob>;
  /** Stores a new layer from its entries (commit, build); a push makes its gzip form when it needs one. Optional. */
  storeLayer?(entries: AsyncIterable<LayerEntry> | Iterable<LayerEntry>): Promise<StoredLayer>;
  /** Records a new image from its config (layers already stored) and tags it; answers its ID. Optional. */
  createImage?(config: ImageConfigBlob, tags?: string[], parent?: string): Promise<string>;
}
