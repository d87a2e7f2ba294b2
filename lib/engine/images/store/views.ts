import type { ImageConfigBlob, ImageHistoryEntry, ImageRecord } from '../image-store-types.js';

const seconds = (iso: string | undefined) => (iso ? Math.floor(Date.parse(iso) / 1000) || 0 : 0);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const sizeOf = (record: ImageRecord) => record.layers.reduce((sum, l) => sum + l.size, 0);

/** One entry of `GET /images/json` (dockerd's image.Summary). */
export function listView(record: ImageRecord, config: ImageConfigBlob): Record<string, unknown> {
  return {
    Id: record.id,
    ParentId: record.parent ?? '',
    RepoTags: record.repoTags,
    RepoDigests: record.repoDigests,
    Created: seconds(config.created),
    Size: sizeOf(record),
    SharedSize: -1,
    Labels: config.config?.Labels ?? {},
    Containers: -1,
  };
}

/**
 * An image config's `config` as dockerd 20.10 shows it in inspect: its container.Config, whose
 * fields without `omitempty` are always there (`OnBuild: null`, `Image: ''`, the Attach flags…)
 * even when the config blob leaves them out. docker-py's suite reads `Config.OnBuild`.
 */
const CONFIG_DEFAULTS = {
  Hostname: '', Domainname: '', User: '', AttachStdin: false, AttachStdout: false, AttachStderr: false, Tty: false, OpenStdin: false,
  StdinOnce: false, Env: null, Cmd: null, Image: '', Volumes: null, WorkingDir: '', Entrypoint: null, OnBuild: null, Labels: null,
} as const;

/** `GET /images/{name}/json` (dockerd's image.InspectResponse). */
export function inspectView(record: ImageRecord, config: ImageConfigBlob): Record<string, unknown> {
  return {
    Id: record.id,
    RepoTags: record.repoTags,
    RepoDigests: record.repoDigests,
    Parent: record.parent ?? '',
    // dockerd shows the newest history entry's comment (`docker commit -m`, "Imported from -").
    Comment: typeof config.comment === 'string' ? config.comment : config.history?.[config.history.length - 1]?.comment ?? '',
    Created: config.created ?? '',
    DockerVersion: typeof config.docker_version === 'string' ? config.docker_version : '',
    // dockerd 20.10 also shows the build step's container and its config (empty ones for an
    // imported or pulled image); compose 1.29 reads ContainerConfig when it recreates a container.
    Container: typeof config.container === 'string' ? config.container : '',
    ContainerConfig: { ...CONFIG_DEFAULTS, ...(isObject(config.container_config) ? config.container_config : {}) },
    Author: config.author ?? '',
    Config: { ...CONFIG_DEFAULTS, ...(config.config ?? {}) },
    Architecture: config.architecture,
    ...(config.variant ? { Variant: config.variant } : {}),
    Os: config.os,
    Size: sizeOf(record),
    GraphDriver: { Name: 'dockgate', Data: null },
    RootFS: { Type: 'layers', Layers: config.rootfs.diff_ids },
    Metadata: { LastTagTime: record.lastTagTime ?? '0001-01-01T00:00:00Z' },
  };
}

/**
 * `GET /images/{name}/history`, newest first as dockerd answers: one row per config history entry,
 * the top row carrying the image ID and tags, others `<missing>` (dockerd's word for layers that
 * are not images of their own); empty layers have size 0, others the size dockerd gives a layer
 * (`sizes`, the bytes of its files; the tar's length when not given).
 */
export function historyView(record: ImageRecord, config: ImageConfigBlob, sizes: readonly number[] = record.layers.map((l) => l.size)): Record<string, unknown>[] {
  const history: ImageHistoryEntry[] = config.history ?? record.layers.map(() => ({}));
  let layer = 0;
  const rows = history.map((entry) => {
    const size = entry.empty_layer ? 0 : sizes[layer++] ?? 0;
    return { Id: '<missing>', Created: seconds(entry.created), CreatedBy: entry.created_by ?? '', Tags: null as string[] | null, Size: size, Comment: entry.comment ?? '' };
  });
  rows.reverse();
  if (rows[0]) {
    rows[0].Id = record.id;
    rows[0].Tags = record.repoTags.length > 0 ? record.repoTags : null;
  }
  return rows;
}
