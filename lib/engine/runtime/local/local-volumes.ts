import { randomBytes } from 'node:crypto';
import { chownSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { Beneath } from '../../linux/beneath.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { nameFilter } from '../../../engine-api/name-pattern.js';
import type { EngineFilters } from '../../../engine-api/filters.js';
import type { VolumeCreateBody, VolumePruneReport } from '../../../engine-api/volume-operations.js';
import { labelMatches } from './label-filter.js';

/** dockerd's rule for a local volume name (volume/local: validName). */
const VALID_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;
/** A volume is a directory named after it: a name is at most one file name long (NAME_MAX). */
const MAX_NAME_LENGTH = 255;

interface VolumeMeta {
  CreatedAt: string;
  Labels: Record<string, string> | null;
}

/** Where a removed volume waits for its content to go (not a valid volume name: never listed). */
const TRASH_PREFIX = '.removed-';

/**
 * Named volumes of the `local` driver: a directory `<dir>/<name>/_data` per volume (what the
 * container mounts) beside its `volume.json` (labels, creation time), surviving restarts as
 * dockerd's do. A named volume a create mentions is made on the way, as dockerd makes it.
 * Driver options (`-o type=… device=…`) are refused: this driver only makes directories.
 *
 * A volume's content is its containers' (beneath.ts's rule): it is never read or removed with
 * blocking I/O on the event loop, where a tenant's million files would hold the whole server. A
 * removed volume is renamed aside at once and its content removed in the background, through
 * beneath.ts, nothing followed.
 */
export class LocalVolumes {
  constructor(
    private readonly dir: string,
    private readonly runtimeName: string,
    /** The volumes every container mounts (a volume they mount is in use). */
    private readonly users: () => { id: string; names: readonly string[] }[],
    /** Host owner of a new volume's `_data`, from its labels or its container's: container root's host ids under a user namespace (as dockerd's userns-remap). */
    private readonly owner?: (labels: Readonly<Record<string, string>> | null | undefined) => { uid: number; gid: number } | undefined,
  ) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // What an earlier server had not finished removing.
    for (const name of readdirSync(dir)) if (name.startsWith(TRASH_PREFIX)) this.discard(name);
  }

  mountpoint(name: string): string {
    return join(this.dir, name, '_data');
  }

  has(name: string): boolean {
    return this.meta(name) !== undefined;
  }

  /** `docker volume create`; `madeFor` are the labels of the container it is made for (their owner's ids own it), else the volume's own. */
  create(body: VolumeCreateBody, madeFor?: Readonly<Record<string, string>> | null): Record<string, unknown> {
    const name = body.Name === undefined || body.Name === '' ? randomBytes(32).toString('hex') : String(body.Name);
    // dockerd prefixes its volume errors with the operation and name (`create NAME: …`).
    if (name.length === 1) throw EngineError.invalidParameter(`create ${name}: volume name is too short, names should be at least two alphanumeric characters`);
    if (!VALID_NAME.test(name)) {
      throw EngineError.invalidParameter(`create ${name}: "${name}" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path`);
    }
    if (name.length > MAX_NAME_LENGTH) throw EngineError.invalidParameter(`create ${name.slice(0, 32)}…: volume name is too long, names may have at most ${MAX_NAME_LENGTH} characters`);
    if (body.Driver !== undefined && body.Driver !== '' && body.Driver !== 'local') {
      throw EngineError.notFound(`create ${name}: error looking up volume plugin ${String(body.Driver)}: plugin "${String(body.Driver)}" not found`);
    }
    if (body.DriverOpts && Object.keys(body.DriverOpts).length > 0) {
      throw EngineError.invalidParameter(`create ${name}: DriverOpts: local volume options are not supported by the ${this.runtimeName} runtime (its volumes are plain directories)`);
    }
    // dockerd answers an existing volume of that name as it is.
    if (!this.has(name)) {
      // The owner first: a create it refuses (no id range left for the owner) leaves no directory behind.
      const owner = this.owner?.(madeFor ?? body.Labels);
      mkdirSync(this.mountpoint(name), { recursive: true });
      if (owner) chownSync(this.mountpoint(name), owner.uid, owner.gid);
      const meta: VolumeMeta = { CreatedAt: new Date().toISOString(), Labels: body.Labels && Object.keys(body.Labels).length > 0 ? { ...body.Labels } : null };
      writeFileSync(join(this.dir, name, 'volume.json'), JSON.stringify(meta));
    }
    return this.inspect(name);
  }

  inspect(name: string): Record<string, unknown> {
    const meta = this.meta(name);
    if (!meta) throw EngineError.notFound(`get ${name}: no such volume`);
    return { CreatedAt: meta.CreatedAt, Driver: 'local', Labels: meta.Labels, Mountpoint: this.mountpoint(name), Name: name, Options: null, Scope: 'local' };
  }

  list(filters: EngineFilters): { Volumes: Record<string, unknown>[]; Warnings: string[] | null } {
    const pick = (f: string): string[] => [...(filters.get(f) ?? [])];
    const named = nameFilter(filters);
    const drivers = pick('driver');
    const labels = pick('label');
    const dangling = pick('dangling');
    const used = this.usedNames();
    const volumes = this.names().map((n) => this.inspect(n)).filter((v) => {
      const name = v.Name as string;
      if (!named(name)) return false;
      if (drivers.length > 0 && !drivers.includes('local')) return false;
      if (!labels.every((l) => labelMatches((v.Labels ?? {}) as Record<string, string>, l))) return false;
      if (dangling.length > 0 && !dangling.some((d) => (d === 'true' || d === '1') === !used.has(name))) return false;
      return true;
    });
    return { Volumes: volumes, Warnings: null };
  }

  remove(name: string, force: boolean): void {
    if (!this.has(name)) {
      if (force) return;
      throw EngineError.notFound(`get ${name}: no such volume`);
    }
    const users = this.users().filter((c) => c.names.includes(name)).map((c) => c.id);
    if (users.length > 0) throw EngineError.conflict(`remove ${name}: volume is in use - [${users.join(', ')}]`);
    this.trash(name);
  }

  prune(filters: EngineFilters): VolumePruneReport {
    const labels = [...(filters.get('label') ?? [])];
    const notLabels = [...(filters.get('label!') ?? [])];
    const used = this.usedNames();
    const deleted: string[] = [];
    for (const name of this.names()) {
      if (used.has(name)) continue;
      const volumeLabels = this.meta(name)?.Labels ?? {};
      if (!labels.every((l) => labelMatches(volumeLabels, l)) || notLabels.some((l) => labelMatches(volumeLabels, l))) continue;
      this.trash(name);
      deleted.push(name);
    }
    return { VolumesDeleted: deleted.length > 0 ? deleted : null, SpaceReclaimed: 0 };
  }

  /** A named volume's directory, the volume made when missing (as dockerd makes one a create mentions, with the mount's `labels`) for the container with labels `madeFor`. */
  named(name: string, madeFor?: Readonly<Record<string, string>> | null, labels?: Record<string, string>): string {
    if (!this.has(name)) this.create({ Name: name, ...(labels ? { Labels: labels } : {}) }, madeFor);
    return this.mountpoint(name);
  }

  /** A new anonymous volume: a 64-hex name, as dockerd gives one, for the container with labels `madeFor`, with the mount's `labels`. */
  anonymous(madeFor?: Readonly<Record<string, string>> | null, labels?: Record<string, string>): { name: string; source: string } {
    const name = this.create(labels ? { Labels: labels } : {}, madeFor).Name as string;
    return { name, source: this.mountpoint(name) };
  }

  /** True while the volume's directory has no entries (dockerd copies an image's content only into an empty volume); one entry is read, off the event loop. */
  async isEmpty(name: string): Promise<boolean> {
    try {
      const dir = await opendir(this.mountpoint(name));
      try {
        return (await dir.read()) === null;
      } finally {
        await dir.close().catch(() => undefined);
      }
    } catch {
      return false;
    }
  }

  /** The volume is gone at once (renamed aside, a constant-time step); its content goes in the background. */
  private trash(name: string): void {
    const aside = `${TRASH_PREFIX}${randomBytes(8).toString('hex')}`;
    renameSync(join(this.dir, name), join(this.dir, aside));
    this.discard(aside);
  }

  /** Removes a renamed-aside volume through beneath.ts (threadpool I/O, no link followed). */
  private discard(aside: string): void {
    void Beneath.removeIn(this.dir, aside).catch(() => undefined);
  }

  private names(): string[] {
    return readdirSync(this.dir).filter((n) => this.has(n)).sort();
  }

  private usedNames(): Set<string> {
    return new Set(this.users().flatMap((c) => c.names));
  }

  private meta(name: string): VolumeMeta | undefined {
    if (!VALID_NAME.test(name)) return undefined;
    try {
      return JSON.parse(readFileSync(join(this.dir, name, 'volume.json'), 'utf8')) as VolumeMeta;
    } catch {
      return undefined;
    }
  }
}
