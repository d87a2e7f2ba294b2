/** What `GET /system/df` asks for. */
export interface DiskUsageOptions {
  /** Object types to compute (`type`, API ≥ 1.42): `container`, `image`, `volume`, `build-cache`; empty means all. */
  types: ReadonlySet<string>;
  /** The API version the request is served at. */
  apiVersion: string;
}

/**
 * Optional system operations. `GET /info` works on every runtime without them: the router
 * composes it from `list()` (container counts), `listImages()` (image count) and the host
 * (NCPU, MemTotal, kernel); `systemInfo` adds or overrides what the runtime knows better.
 */
export interface SystemOperations {
  /**
   * Fields of dockerd's `GET /info` (types/system.Info) the runtime reports: its storage
   * `Driver`, `DockerRootDir`, `Labels`, or a forwarding runtime's whole answer. Merged over the
   * router's own fields; `ServerVersion` stays the router's (the one `/version` reports).
   */
  systemInfo(apiVersion: string): Promise<Record<string, unknown>>;
  /**
   * `GET /system/df` body (`LayersSize`, `Images`, `Containers`, `Volumes`, `BuildCache`).
   * Without it the router composes one from `listImages`, `list` and `listVolumes`.
   */
  diskUsage(options: DiskUsageOptions): Promise<Record<string, unknown>>;
}
