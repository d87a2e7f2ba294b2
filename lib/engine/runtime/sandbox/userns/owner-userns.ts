import { mkdirSync } from 'node:fs';
import { EngineError } from '../../../../engine-api/engine-error.js';
import { ownerOf } from '../../../policy/owner-label.js';
import { idMapAt, idMapCount, MAP_SIZE, type IdMap } from './id-map.js';
import { STAGE_DIR } from './enter.js';
import { OwnerRanges } from './owner-ranges.js';
import { SandboxUserns, type UsernsHostTools } from './sandbox-userns.js';

/**
 * The sandbox runtime's user namespaces, one per owner: the server's subordinate range is cut
 * into container ranges of 65536 ids (id-map.ts `idMapAt`), and each owner (a container's
 * `dockgate.owner` label) runs on a range of its own (owner-ranges.ts), in a namespace of its
 * own. One tenant's container root is then a host uid no other tenant's container maps: a file
 * it makes belongs, for every other tenant's container, to nobody, wherever a path is shared.
 * Containers without an owner (no policy, or an administrator's container made without one)
 * run on the first range, as every container did before.
 */
export class OwnerUserns {
  /** One namespace per range index, made on first use. */
  private readonly byIndex = new Map<number, SandboxUserns>();

  private constructor(readonly range: IdMap, private readonly ranges: OwnerRanges, private readonly tools: UsernsHostTools) {}

  /**
   * The namespaces over the server's range (sandbox-options.ts reads it from option `userns`);
   * undefined when it has none. Owners' ranges are kept in `rangesFile`.
   */
  static open(range: IdMap | undefined, tools: UsernsHostTools, rangesFile: string): OwnerUserns | undefined {
    if (!range) return undefined;
    mkdirSync(STAGE_DIR, { recursive: true, mode: 0o711 });
    return new OwnerUserns(range, new OwnerRanges(rangesFile), tools);
  }

  /**
   * The user namespace of a container with these labels: its owner's range, assigned at the
   * owner's first container. An owner beyond what the server's range holds is a 409 naming the
   * options that widen it: never another owner's range.
   */
  of(labels: unknown): SandboxUserns {
    const owner = ownerOf(labels);
    return this.at(this.ranges.indexOf(owner), owner);
  }

  private at(index: number, owner: string | undefined): SandboxUserns {
    let userns = this.byIndex.get(index);
    if (userns) return userns;
    const map = idMapAt(this.range, index);
    if (!map) {
      const { uid, size } = this.range;
      throw EngineError.conflict(`no subordinate id range left for owner ${owner ?? '(none)'}: the server's range (host uids ${uid}-${uid + size - 1}) holds ${idMapCount(this.range)} ranges of ${MAP_SIZE} ids, one per owner and one for containers without an owner; widen /etc/subuid's and /etc/subgid's root range or the sandbox option userns.size`);
    }
    // Idmapped host binds (userns/enter.ts) only for containers without an owner (no policy, or an
    // administrator's): an owner's container root stays an unprivileged host uid in the host
    // directories it may bind (a tenant's allowedBindDirs), never host root there.
    userns = new SandboxUserns(map, index === 0 ? this.tools : { ...this.tools, idmap: undefined });
    this.byIndex.set(index, userns);
    return userns;
  }
}
