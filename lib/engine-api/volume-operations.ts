import type { EngineFilters } from './filters.js';

/** `POST /volumes/create` body (types/volume.CreateOptions), kept as sent. */
export interface VolumeCreateBody {
  Name?: string;
  Driver?: string;
  DriverOpts?: Record<string, string>;
  Labels?: Record<string, string>;
  [field: string]: unknown;
}

/** `POST /volumes/prune` answer. */
export interface VolumePruneReport {
  VolumesDeleted: string[] | null;
  SpaceReclaimed: number;
}

/**
 * Optional volume operations. Listing and inspecting are separate from creating: a runtime
 * without volume storage lists none (truthfully) and leaves create/remove/prune out (501).
 */
export interface VolumeOperations {
  /** `GET /volumes` body: `{ Volumes, Warnings }`. */
  listVolumes(filters: EngineFilters, apiVersion: string): Promise<{ Volumes: Record<string, unknown>[]; Warnings: string[] | null }>;
  /** `GET /volumes/{name}`; unknown → 404 `get <name>: no such volume`. */
  inspectVolume(name: string, apiVersion: string): Promise<Record<string, unknown>>;
  /** `POST /volumes/create`: the created volume (201). */
  createVolume(body: VolumeCreateBody, apiVersion: string): Promise<Record<string, unknown>>;
  /** `DELETE /volumes/{name}`; in use → 409. */
  removeVolume(name: string, force: boolean): Promise<void>;
  /** `POST /volumes/prune`. */
  pruneVolumes(filters: EngineFilters, apiVersion: string): Promise<VolumePruneReport>;
}
