import { EngineError } from '../../../engine-api/engine-error.js';
import { bindEntryOf, type BindSpec, type ContainerSpec, type MountSpec } from '../../../engine-api/container-spec.js';

/**
 * One mount of a container as dockerd keeps it (container.MountPoint) and inspect's `Mounts`
 * shows it, plus two facts of ours that inspect leaves out.
 */
export interface MountPoint {
  Type: 'bind' | 'volume' | 'tmpfs';
  /** The volume's name (volumes only). */
  Name?: string;
  Source: string;
  Destination: string;
  /** `local` (volumes only). */
  Driver?: string;
  Mode: string;
  RW: boolean;
  Propagation: string;
  /** Copy the image's content at Destination into the volume at the first start while it is empty (dockerd's CopyData; `nocopy` clears it). */
  copy?: boolean;
  /** A volume made for this container without a name: `docker rm -v` and `--rm` remove it. */
  anonymous?: boolean;
  /**
   * `Source` with its links resolved, once, at create (mount-sources.ts): what every start binds,
   * walked without following (inspect shows `Source` as given, as dockerd does).
   */
  resolved?: string;
}

/** What {@link containerMounts} needs from the runtime's volumes and containers. */
export interface MountSources {
  /** The directory a named volume mounts from, the volume made when missing (dockerd makes it at create), with `labels` then. */
  named(name: string, labels?: Record<string, string>): string;
  /** A new anonymous volume (64 hex characters), with its directory, and `labels` when given. */
  anonymous(labels?: Record<string, string>): { name: string; source: string };
  /** The mounts of the container `ref` (VolumesFrom); throws dockerd's 404 for an unknown one. */
  mountsOf(ref: string): readonly MountPoint[];
  runtime: string;
}

/** Mount fields taken here or by the executor (TmpfsOptions: the executor's tmpfs); any other set one is refused. */
const MOUNT_KEYS = new Set(['Type', 'Source', 'Target', 'ReadOnly', 'Consistency', 'BindOptions', 'VolumeOptions', 'TmpfsOptions']);

const BIND_MODES = new Set(['ro', 'rw', 'z', 'Z', 'nocopy', 'rprivate', 'private']);

/**
 * A container's mounts at create, in dockerd's order of precedence (daemon/volumes.go
 * registerMountPoints): VolumesFrom first, then Binds and Mounts over them, then an anonymous
 * volume for each `Config.Volumes` path (the image's and `-v /path`) nothing else is mounted at.
 * Named volumes are made on the way. Propagation other than private is refused by name.
 */
export function containerMounts(spec: ContainerSpec, sources: MountSources): MountPoint[] {
  const { host } = spec;
  const byDestination = new Map<string, MountPoint>();
  for (const from of host.volumesFrom) {
    if (from === '') throw EngineError.invalidParameter(`HostConfig.VolumesFrom: invalid entry "${String(from)}"`);
    const [ref = '', mode = '', ...extra] = from.split(':');
    if (extra.length > 0 || (mode !== '' && mode !== 'ro' && mode !== 'rw')) throw EngineError.invalidParameter(`invalid mode: ${mode}`);
    for (const m of sources.mountsOf(ref)) {
      // dockerd's copy keeps the source's RW unless `:ro` asks for less, drops its Mode and never copies data again.
      byDestination.set(m.Destination, { ...withoutOwnFacts(m), Mode: '', RW: m.RW && mode !== 'ro' });
    }
  }
  for (const bind of host.binds) {
    const m = bindMount(bind, sources);
    byDestination.set(m.Destination, m);
  }
  for (const mount of host.mounts) {
    const m = mountOf(mount, sources);
    if (m) byDestination.set(m.Destination, m);
  }
  for (const destination of spec.volumes) {
    if (!destination.startsWith('/')) throw EngineError.invalidParameter(`invalid mount config: ${destination} is not an absolute path`);
    if (byDestination.has(destination) || Object.hasOwn(host.tmpfs, destination)) continue;
    const made = sources.anonymous();
    byDestination.set(destination, { Type: 'volume', Name: made.name, Source: made.source, Destination: destination, Driver: 'local', Mode: '', RW: true, Propagation: '', copy: true, anonymous: true });
  }
  return [...byDestination.values()];
}

/** A mount as inspect's `Mounts` shows it. */
export function mountView(m: MountPoint): Record<string, unknown> {
  const { Name, Driver, resolved: _resolved, ...rest } = withoutOwnFacts(m);
  return m.Type === 'volume' ? { Type: rest.Type, Name, Source: rest.Source, Destination: rest.Destination, Driver, Mode: rest.Mode, RW: rest.RW, Propagation: rest.Propagation } : rest;
}

/**
 * The spec the executor runs: every bind and volume as a typed `source:destination:ro|rw` bind of a
 * host directory, parents before what is mounted below them; a writable tmpfs mount as a
 * tmpfs entry (`size=`, `mode=` from its TmpfsOptions); other mounts as sent, for the executor
 * to honor or refuse; no VolumesFrom (its mounts are among the binds).
 */
export function executionSpec(spec: ContainerSpec, mounts: readonly MountPoint[]): ContainerSpec {
  const { host } = spec;
  const binds = mounts.filter((m) => m.Type !== 'tmpfs')
    .sort((a, b) => depth(a.Destination) - depth(b.Destination))
    .map((m): BindSpec => ({ source: hostPathOf(m), target: m.Destination, modes: [m.RW ? 'rw' : 'ro'], readOnly: !m.RW, propagation: '' }));
  const tmpfs: Record<string, string> = {};
  const others = host.mounts.filter((m) => {
    if (m.type === 'tmpfs' && !m.readOnly) {
      tmpfs[m.target] = tmpfsOptions(m.options.TmpfsOptions);
      return false;
    }
    return m.type !== 'bind' && m.type !== 'volume';
  });
  return { ...spec, host: { ...host, binds, mounts: others, volumesFrom: [], tmpfs: { ...host.tmpfs, ...tmpfs } } };
}

/** `size=…,mode=…` for a tmpfs mount's TmpfsOptions (SizeBytes, Mode), as `--tmpfs` would send them. */
function tmpfsOptions(raw: unknown): string {
  const options = (raw ?? {}) as Record<string, unknown>;
  const out: string[] = [];
  if (typeof options.SizeBytes === 'number' && options.SizeBytes > 0) out.push(`size=${options.SizeBytes}`);
  if (typeof options.Mode === 'number' && options.Mode > 0) out.push(`mode=${options.Mode.toString(8)}`);
  return out.join(',');
}

/** The host path a bind or volume mounts from: the one resolved at create, else `Source` as given. */
export function hostPathOf(m: MountPoint): string {
  return m.resolved ?? m.Source;
}

/** The names of the volumes among `mounts`. */
export function volumeNamesOf(mounts: readonly MountPoint[]): string[] {
  return mounts.flatMap((m) => (m.Type === 'volume' && m.Name ? [m.Name] : []));
}

function bindMount(bind: BindSpec, sources: MountSources): MountPoint {
  const { source, target: destination, modes } = bind;
  if (source === '') {
    // `/path` alone is an anonymous volume there, as dockerd's parser reads it.
    const made = sources.anonymous();
    return { Type: 'volume', Name: made.name, Source: made.source, Destination: destination, Driver: 'local', Mode: '', RW: true, Propagation: '', copy: true, anonymous: true };
  }
  const mode = modes.join(',');
  for (const m of modes) {
    if (!BIND_MODES.has(m)) {
      if (['shared', 'rshared', 'slave', 'rslave'].includes(m)) throw EngineError.invalidParameter(`HostConfig.Binds "${bindEntryOf(bind)}": propagation "${m}" is not supported by the ${sources.runtime} runtime (private only)`);
      throw EngineError.invalidParameter(`invalid mode: ${mode}`);
    }
  }
  const rw = !bind.readOnly;
  if (source.startsWith('/')) return { Type: 'bind', Source: source, Destination: destination, Mode: mode, RW: rw, Propagation: 'rprivate' };
  // dockerd's parser gives a named volume without a mode the label mode `z`.
  return { Type: 'volume', Name: source, Source: sources.named(source), Destination: destination, Driver: 'local', Mode: mode === '' ? 'z' : mode, RW: rw, Propagation: '', copy: !modes.includes('nocopy') };
}

function mountOf(mount: MountSpec, sources: MountSources): MountPoint | undefined {
  const { target, options } = mount;
  if (!target.startsWith('/')) throw EngineError.invalidParameter(`HostConfig.Mounts: invalid mount config: Target "${target}" must be an absolute path`);
  const rw = !mount.readOnly;
  const source = mount.source ?? '';
  for (const [key, value] of Object.entries(options)) {
    if (!MOUNT_KEYS.has(key) && !isEmpty(value)) throw EngineError.invalidParameter(`HostConfig.Mounts.${key} is not supported by the ${sources.runtime} runtime`);
  }
  const volumeOptions = (options.VolumeOptions ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(volumeOptions)) {
    if (key !== 'NoCopy' && key !== 'Labels' && !isEmpty(value)) throw EngineError.invalidParameter(`HostConfig.Mounts.VolumeOptions.${key} is not supported by the ${sources.runtime} runtime`);
  }
  // The labels of the volume the mount makes (an existing one keeps its own), as dockerd gives them.
  const labels = volumeLabels(volumeOptions.Labels);
  if (labels && mount.type !== 'volume') throw EngineError.invalidParameter(`invalid mount config for type "${String(mount.type)}": field VolumeOptions must not be specified`);
  switch (mount.type) {
    case 'bind': {
      const bindOptions = (options.BindOptions ?? {}) as Record<string, unknown>;
      for (const [key, value] of Object.entries(bindOptions)) {
        if (key !== 'Propagation' && !isEmpty(value)) throw EngineError.invalidParameter(`HostConfig.Mounts.BindOptions.${key} is not supported by the ${sources.runtime} runtime`);
      }
      const propagation = bindOptions.Propagation;
      if (propagation !== undefined && propagation !== '' && propagation !== 'rprivate' && propagation !== 'private') {
        throw EngineError.invalidParameter(`HostConfig.Mounts: propagation "${String(propagation)}" is not supported by the ${sources.runtime} runtime (private only)`);
      }
      return { Type: 'bind', Source: source, Destination: target, Mode: '', RW: rw, Propagation: typeof propagation === 'string' && propagation !== '' ? propagation : 'rprivate' };
    }
    case 'volume': {
      const copy = volumeOptions.NoCopy !== true;
      if (source === '') {
        const made = sources.anonymous(labels);
        return { Type: 'volume', Name: made.name, Source: made.source, Destination: target, Driver: 'local', Mode: '', RW: rw, Propagation: '', copy, anonymous: true };
      }
      return { Type: 'volume', Name: source, Source: sources.named(source, labels), Destination: target, Driver: 'local', Mode: '', RW: rw, Propagation: '', copy };
    }
    case 'tmpfs':
      for (const [key, value] of Object.entries((options.TmpfsOptions ?? {}) as Record<string, unknown>)) {
        if (key !== 'SizeBytes' && key !== 'Mode' && !isEmpty(value)) throw EngineError.invalidParameter(`HostConfig.Mounts.TmpfsOptions.${key} is not supported by the ${sources.runtime} runtime`);
      }
      return { Type: 'tmpfs', Source: '', Destination: target, Mode: '', RW: rw, Propagation: '' };
    default:
      // Left to the executor, which refuses a type it cannot mount, naming it.
      return undefined;
  }
}

function withoutOwnFacts(m: MountPoint): MountPoint {
  const { copy: _copy, anonymous: _anonymous, ...rest } = m;
  return rest;
}

/** `VolumeOptions.Labels`: string values only (dockerd's JSON decoding refuses others); undefined when none. */
function volumeLabels(value: unknown): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw EngineError.invalidParameter('HostConfig.Mounts.VolumeOptions.Labels must be an object of strings');
  }
  return Object.keys(value).length > 0 ? { ...(value as Record<string, string>) } : undefined;
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || v === false || v === '' || (typeof v === 'object' && Object.keys(v).length === 0);
}

function depth(path: string): number {
  return path.split('/').filter((p) => p !== '').length;
}
