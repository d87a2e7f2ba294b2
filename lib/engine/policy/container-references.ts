import { withHostSpec, type ContainerSpec, type WritableHostSpec } from '../../engine-api/container-spec.js';

/**
 * The create fields that name another container: how to take the references out of the typed
 * spec, and how to write the field again with each reference replaced by the id it was resolved
 * to (so the runtime is handed the container the policy checked, never a name or prefix it
 * resolves anew).
 */
export interface ContainerReferenceField {
  /** `HostConfig.NetworkMode`… (the name refusals give). */
  readonly field: string;
  /** The references the spec's field names (a container's name, id or id prefix). */
  refs(spec: ContainerSpec): string[];
  /** The field's new value with each reference that `ids` knows replaced by its id. */
  pin(spec: ContainerSpec, ids: ReadonlyMap<string, string>): Partial<WritableHostSpec>;
}

const CONTAINER_MODE = 'container:';

type ModeKey = 'networkMode' | 'pidMode' | 'ipcMode' | 'cgroup';
type ListKey = 'volumesFrom' | 'links';

function containerMode(field: string, key: ModeKey): ContainerReferenceField {
  return {
    field,
    refs: (spec) => (spec.host[key].startsWith(CONTAINER_MODE) ? [spec.host[key].slice(CONTAINER_MODE.length)] : []),
    pin: (spec, ids) => {
      const v = spec.host[key];
      const id = v.startsWith(CONTAINER_MODE) ? ids.get(v.slice(CONTAINER_MODE.length)) : undefined;
      return id === undefined ? {} : { [key]: `${CONTAINER_MODE}${id}` };
    },
  };
}

/** A list of `REF[:suffix]` entries (`--volumes-from NAME[:ro|:rw]`, `--link NAME[:ALIAS]`). */
function referenceList(field: string, key: ListKey, refOf: (entry: string) => string, pinned: (entry: string, id: string) => string): ContainerReferenceField {
  return {
    field,
    refs: (spec) => spec.host[key].map(refOf),
    pin: (spec, ids) => {
      const entries = spec.host[key];
      const out = entries.map((entry) => {
        const id = ids.get(refOf(entry));
        return id === undefined ? entry : pinned(entry, id);
      });
      return out.some((e, i) => e !== entries[i]) ? { [key]: out } : {};
    },
  };
}

/** Every create field that names another container. */
export const CONTAINER_REFERENCES: readonly ContainerReferenceField[] = [
  containerMode('HostConfig.NetworkMode', 'networkMode'),
  containerMode('HostConfig.PidMode', 'pidMode'),
  containerMode('HostConfig.IpcMode', 'ipcMode'),
  containerMode('HostConfig.Cgroup', 'cgroup'),
  // `--volumes-from NAME[:ro|:rw]`: the mode is kept.
  referenceList('HostConfig.VolumesFrom', 'volumesFrom', (e) => e.split(':')[0] as string, (e, id) => [id, ...e.split(':').slice(1)].join(':')),
  // `--link NAME[:ALIAS]`: the alias defaults to the name, so it is written out.
  referenceList('HostConfig.Links', 'links', (e) => e.split(':')[0]!.replace(/^\//, ''), (e, id) => `${id}:${e.split(':')[1] ?? e.split(':')[0]!.replace(/^\//, '')}`),
];

/**
 * A create's spec with its container references pinned to the ids in `ids` (reference → id, as
 * the policy's lookups resolved them), typed and in the kept body alike; the spec itself when
 * none is.
 */
export function pinContainerReferences(spec: ContainerSpec, ids: ReadonlyMap<string, string>): ContainerSpec {
  if (ids.size === 0) return spec;
  const changes = Object.assign({}, ...CONTAINER_REFERENCES.map(({ pin }) => pin(spec, ids))) as Partial<WritableHostSpec>;
  return withHostSpec(spec, changes);
}
