/**
 * The create fields that name another container: how to take the references out of a value, and
 * how to write the value again with each reference replaced by the id it was resolved to (so the
 * runtime is handed the container the policy checked, never a name or prefix it resolves anew).
 */
export interface ContainerReferenceField {
  /** `HostConfig.NetworkMode`… */
  readonly field: string;
  /** The references the value names (a container's name, id or id prefix). */
  refs(value: unknown): string[];
  /** The value with each reference that `ids` knows replaced by its id. */
  pin(value: unknown, ids: ReadonlyMap<string, string>): unknown;
}

const CONTAINER_MODE = 'container:';

function containerMode(field: string): ContainerReferenceField {
  return {
    field,
    refs: (v) => (typeof v === 'string' && v.startsWith(CONTAINER_MODE) ? [v.slice(CONTAINER_MODE.length)] : []),
    pin: (v, ids) => {
      const id = typeof v === 'string' && v.startsWith(CONTAINER_MODE) ? ids.get(v.slice(CONTAINER_MODE.length)) : undefined;
      return id === undefined ? v : `${CONTAINER_MODE}${id}`;
    },
  };
}

/** A list of `REF[:suffix]` entries (`--volumes-from NAME[:ro|:rw]`, `--link NAME[:ALIAS]`). */
function referenceList(field: string, refOf: (entry: string) => string, pinned: (entry: string, id: string) => string): ContainerReferenceField {
  const entries = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return {
    field,
    refs: (v) => entries(v).map(refOf),
    pin: (v, ids) => (Array.isArray(v) ? v.map((entry: unknown) => {
      const id = typeof entry === 'string' ? ids.get(refOf(entry)) : undefined;
      return id === undefined ? entry : pinned(entry as string, id);
    }) : v),
  };
}

/** Every create field that names another container. */
export const CONTAINER_REFERENCES: readonly ContainerReferenceField[] = [
  containerMode('HostConfig.NetworkMode'),
  containerMode('HostConfig.PidMode'),
  containerMode('HostConfig.IpcMode'),
  containerMode('HostConfig.Cgroup'),
  // `--volumes-from NAME[:ro|:rw]`: the mode is kept.
  referenceList('HostConfig.VolumesFrom', (e) => e.split(':')[0] as string, (e, id) => [id, ...e.split(':').slice(1)].join(':')),
  // `--link NAME[:ALIAS]`: the alias defaults to the name, so it is written out.
  referenceList('HostConfig.Links', (e) => e.split(':')[0]!.replace(/^\//, ''), (e, id) => `${id}:${e.split(':')[1] ?? e.split(':')[0]!.replace(/^\//, '')}`),
];

/**
 * A create body with its container references pinned to the ids in `ids` (reference → id, as the
 * policy's lookups resolved them); the body itself when none is.
 */
export function pinContainerReferences(body: Readonly<Record<string, unknown>>, ids: ReadonlyMap<string, string>): Record<string, unknown> {
  const host = body.HostConfig;
  if (ids.size === 0 || typeof host !== 'object' || host === null || Array.isArray(host)) return body;
  const pinned: Record<string, unknown> = { ...(host as Record<string, unknown>) };
  for (const { field, pin } of CONTAINER_REFERENCES) {
    const key = field.slice('HostConfig.'.length);
    if (key in pinned) pinned[key] = pin(pinned[key], ids);
  }
  return { ...body, HostConfig: pinned };
}
