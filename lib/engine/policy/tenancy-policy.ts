import type { AdminPredicate } from './admin-predicate.js';
import { composePolicies } from './compose-policies.js';
import { imageNamePolicy, type ImageNamePolicyOptions } from './image-name-policy.js';
import { ownerCapsPolicy, type OwnerCapsPolicyOptions } from './owner-caps-policy.js';
import { ownershipPolicy, type OwnershipPolicyOptions } from './ownership-policy.js';
import type { EnginePolicy } from './policy-types.js';
import { tenantPolicy, type TenantPolicyOptions } from './tenant-policy.js';
import { tenantLimitsPolicy, type TenantLimitsPolicyOptions } from './tenant-limits-policy.js';

/** Options of {@link tenancyPolicy}: those of the policies it composes. */
export interface TenancyPolicyOptions
  extends Pick<TenantPolicyOptions, 'allowedBindDirs' | 'allowLoopbackPublish'>, Pick<OwnerCapsPolicyOptions, 'maxContainers' | 'maxImageBytes'>, Pick<ImageNamePolicyOptions, 'registryHosts'>, Pick<TenantLimitsPolicyOptions, 'maxMemory'>, Pick<OwnershipPolicyOptions, 'sharedNamespaces'> {
  /** Who administers (lifts every rule). Defaults to holders of an `engine:api:admin` grant. */
  admin?: AdminPredicate;
}

/**
 * Everything an engine shared by several users needs, in one: {@link ownershipPolicy},
 * {@link tenantPolicy}, {@link imageNamePolicy}, {@link ownerCapsPolicy} and
 * {@link tenantLimitsPolicy}, with one administrator predicate.
 *
 * @example
 * app.use('/engine', guard(scopeOf), engineRouter(runtime, range, {
 *   policy: tenancyPolicy({ admin: adminPredicate({ subjects: ['root'] }), allowedBindDirs: ['/srv/shared'] }),
 * }));
 */
export function tenancyPolicy(options: TenancyPolicyOptions = {}): EnginePolicy {
  if (typeof options !== 'object' || options === null) throw new TypeError('tenancyPolicy options must be an object');
  const admin = options.admin === undefined ? {} : { admin: options.admin };
  return composePolicies(
    ownershipPolicy({ ...admin, ...(options.sharedNamespaces !== undefined ? { sharedNamespaces: options.sharedNamespaces } : {}) }),
    tenantPolicy({
      ...admin,
      ...(options.allowedBindDirs ? { allowedBindDirs: options.allowedBindDirs } : {}),
      ...(options.allowLoopbackPublish !== undefined ? { allowLoopbackPublish: options.allowLoopbackPublish } : {}),
    }),
    imageNamePolicy({ ...admin, ...(options.registryHosts !== undefined ? { registryHosts: options.registryHosts } : {}) }),
    ownerCapsPolicy({
      ...admin,
      ...(options.maxContainers !== undefined ? { maxContainers: options.maxContainers } : {}),
      ...(options.maxImageBytes !== undefined ? { maxImageBytes: options.maxImageBytes } : {}),
    }),
    tenantLimitsPolicy({ ...admin, ...(options.maxMemory !== undefined ? { maxMemory: options.maxMemory } : {}) }),
  );
}
