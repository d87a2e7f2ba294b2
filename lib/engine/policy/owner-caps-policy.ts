import { defaultAdmin, type AdminPredicate } from './admin-predicate.js';
import { allow, refuse, type EnginePolicy } from './policy-types.js';

/** Options of {@link ownerCapsPolicy}. */
export interface OwnerCapsPolicyOptions {
  /** Who administers: administrators are not capped. Defaults to holders of an `engine:api:admin` grant. */
  admin?: AdminPredicate;
  /** Containers (in any state) one subject may own. Defaults to 100 (dockgate's engine-wide cap is 1000). */
  maxContainers?: number;
  /** Bytes of images carrying a tag under one subject's namespace (`bob/…`). Defaults to 10 GiB. */
  maxImageBytes?: number;
}

export const DEFAULT_MAX_CONTAINERS_PER_OWNER = 100;
export const DEFAULT_MAX_IMAGE_BYTES_PER_OWNER = 10 * 1024 ** 3;

/**
 * Per-owner caps, counted from the owner records (the `dockgate.owner` label) and the image
 * list: a create is refused once the subject owns `maxContainers` containers, and a pull, load
 * or tag once the images under its namespace reach `maxImageBytes` (checked before the
 * operation, so one last image may cross the line). Administrators are not capped.
 *
 * @example
 * ownerCapsPolicy({ maxContainers: 20, maxImageBytes: 2 * 1024 ** 3 });
 * @throws {TypeError} naming the option that is malformed.
 */
export function ownerCapsPolicy(options: OwnerCapsPolicyOptions = {}): EnginePolicy {
  const admin = options.admin ?? defaultAdmin;
  if (typeof admin !== 'function') throw new TypeError('ownerCapsPolicy option "admin" must be a function (see adminPredicate)');
  const maxContainers = options.maxContainers ?? DEFAULT_MAX_CONTAINERS_PER_OWNER;
  if (!Number.isSafeInteger(maxContainers) || maxContainers < 0) throw new TypeError('ownerCapsPolicy option "maxContainers" must be an integer >= 0');
  const maxImageBytes = options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES_PER_OWNER;
  if (!Number.isSafeInteger(maxImageBytes) || maxImageBytes < 0) throw new TypeError('ownerCapsPolicy option "maxImageBytes" must be an integer >= 0');
  return async ({ action, caller, lookup }) => {
    if (admin(caller) || caller.subject === undefined) return allow();
    if (action === 'container.create') {
      const owned = await lookup.containerCount(caller.subject);
      if (owned >= maxContainers) return refuse(`${caller.subject} owns ${owned} containers, the most allowed per owner (${maxContainers}): remove some first`);
    }
    if (action === 'image.pull' || action === 'image.load' || action === 'image.tag' || action === 'image.import') {
      const bytes = await lookup.imageBytes(caller.subject);
      if (bytes >= maxImageBytes) return refuse(`the images under ${caller.subject}/ take ${bytes} bytes, the most allowed per owner (${maxImageBytes}): remove some first`);
    }
    return allow();
  };
}
