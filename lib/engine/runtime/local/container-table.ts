import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalContainer } from './local-container.js';

/**
 * Containers by id and name, resolved the way dockerd resolves a reference
 * (daemon.GetContainer): full id, then name (with or without the leading "/"), then a unique
 * id prefix. An ambiguous prefix is a 400, anything else unknown a 404 `No such container: x`.
 */
export class ContainerTable {
  private byId = new Map<string, LocalContainer>();
  private byName = new Map<string, LocalContainer>();

  add(c: LocalContainer): void {
    const holder = this.byName.get(c.name);
    if (holder) {
      throw EngineError.conflict(
        `Conflict. The container name "/${c.name}" is already in use by container "${holder.id}". You have to remove (or rename) that container to be able to reuse that name.`,
      );
    }
    this.byId.set(c.id, c);
    this.byName.set(c.name, c);
  }

  /** Gives a container a new name; a name held by another container is a 409, as dockerd's rename. */
  rename(c: LocalContainer, name: string): void {
    const holder = this.byName.get(name);
    if (holder && holder !== c) {
      throw EngineError.conflict(`Error when allocating new name: Conflict. The container name "/${name}" is already in use by container "${holder.id}". You have to remove (or rename) that container to be able to reuse that name.`);
    }
    if (this.byName.get(c.name) === c) this.byName.delete(c.name);
    c.name = name;
    this.byName.set(name, c);
  }

  /** Number of containers held. */
  get size(): number {
    return this.byId.size;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  delete(c: LocalContainer): void {
    this.byId.delete(c.id);
    if (this.byName.get(c.name) === c) this.byName.delete(c.name);
  }

  all(): LocalContainer[] {
    return [...this.byId.values()];
  }

  resolve(ref: string): LocalContainer {
    if (ref === '') throw EngineError.invalidParameter('invalid name or ID supplied: ""');
    const exact = this.byId.get(ref) ?? this.byName.get(ref.replace(/^\//, ''));
    if (exact) return exact;
    if (/^[0-9a-f]+$/.test(ref)) {
      const matches = [...this.byId.values()].filter((c) => c.id.startsWith(ref));
      if (matches.length > 1) throw EngineError.invalidParameter(`multiple IDs found with provided prefix: ${ref}`);
      if (matches[0]) return matches[0];
    }
    throw EngineError.notFound(`No such container: ${ref}`);
  }
}
