import type { HostSpec } from '../../engine-api/container-spec.js';
import { defaultAdmin, type AdminPredicate } from './admin-predicate.js';
import { allow, refuse, type EnginePolicy } from './policy-types.js';

/** Options of {@link tenantLimitsPolicy}. */
export interface TenantLimitsPolicyOptions {
  /** Who administers: administrators may ask for any limit, or none. Defaults to holders of an `engine:api:admin` grant. */
  admin?: AdminPredicate;
  /**
   * Bytes of memory a tenant's container (or build) may ask for (`--memory`); memory plus swap
   * (`--memory-swap`) may be twice that, and unlimited swap (-1) is refused. A container that
   * asks for none gets the runtime's default (the sandbox's option `memory`). Defaults to 4 GiB.
   */
  maxMemory?: number;
}

export const DEFAULT_MAX_TENANT_MEMORY = 4 * 1024 ** 3;

/**
 * Resource limits a tenant cannot lift (403 naming the field), at create, at build (the RUN
 * containers' limits from the query) and at `docker update`:
 * - `PidsLimit` that asks for no limit: a negative value (`--pids-limit -1`), and 0 at update
 *   (dockerd lifts the limit with it; at create 0 means unset and the runtime's default applies);
 * - `Memory` above `maxMemory`, `MemorySwap` above twice that or -1 (unlimited swap).
 * Administrators are not restricted.
 *
 * @example
 * tenantLimitsPolicy({ maxMemory: 2 * 1024 ** 3 });
 * @throws {TypeError} naming the option that is malformed.
 */
export function tenantLimitsPolicy(options: TenantLimitsPolicyOptions = {}): EnginePolicy {
  const admin = options.admin ?? defaultAdmin;
  if (typeof admin !== 'function') throw new TypeError('tenantLimitsPolicy option "admin" must be a function (see adminPredicate)');
  const maxMemory = options.maxMemory ?? DEFAULT_MAX_TENANT_MEMORY;
  if (!Number.isSafeInteger(maxMemory) || maxMemory < 1) throw new TypeError('tenantLimitsPolicy option "maxMemory" must be a positive integer');
  return ({ action, caller, body, spec }) => {
    if (admin(caller)) return allow();
    const why = (action === 'container.create' || action === 'image.build') && spec
      ? limitField(spec.host, { maxMemory, update: false })
      : action === 'container.update' && body
      ? limitField(updateLimits(body), { maxMemory, update: true })
      : undefined;
    return why === undefined ? allow() : refuse(why);
  };
}

/** The limits of a `docker update` body (HostConfig's fields, as sent: 0 there lifts a limit); values of the wrong type are left to the route's own 400. */
function updateLimits(body: Readonly<Record<string, unknown>>): Limits {
  const n = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
  return { pidsLimit: n(body.PidsLimit), memory: n(body.Memory), memorySwap: n(body.MemorySwap) };
}

type Limits = Pick<HostSpec, 'pidsLimit' | 'memory' | 'memorySwap'>;

/**
 * The first limit of a create's typed HostConfig (or an update body's) that a tenant may not ask
 * for, as a refusal naming it; undefined when there is none.
 */
function limitField(host: Limits, { maxMemory, update }: { maxMemory: number; update: boolean }): string | undefined {
  const pids = host.pidsLimit;
  if (typeof pids === 'number' && (pids < 0 || (update && pids === 0))) {
    return `HostConfig.PidsLimit: ${pids} (no limit on processes) is for administrators; ask for a number of processes${update ? '' : ', or leave it unset for the default'}`;
  }
  const memory = host.memory;
  if (typeof memory === 'number' && memory > maxMemory) {
    return `HostConfig.Memory: ${memory} bytes is more than a tenant's container may have (${maxMemory})`;
  }
  const swap = host.memorySwap;
  if (swap === -1) return 'HostConfig.MemorySwap: -1 (unlimited swap) is for administrators';
  if (typeof swap === 'number' && swap > 2 * maxMemory) {
    return `HostConfig.MemorySwap: ${swap} bytes of memory and swap is more than a tenant's container may have (${2 * maxMemory})`;
  }
  return undefined;
}
